package sim

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// GOALOptions says how to write a schedule as GOAL.
type GOALOptions struct {
	// ReducePsPerByte, when positive, writes each reducing receive as a
	// receive followed by a calc of bytes x ReducePsPerByte that the ops
	// depending on the receive wait for instead; GOAL has no reduction.
	ReducePsPerByte float64
}

// WriteGOAL writes s as GOAL text, streaming it rank by rank. Every op gets
// a label l<index>; durations are written in whole nanoseconds (rounded
// up). Data regions are not part of GOAL and are not written.
func WriteGOAL(w io.Writer, s Schedule, opt GOALOptions) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(bw, "num_ranks %d\n", s.Ranks)
	var buf []Op
	var num []byte
	for r := range s.Ranks {
		fmt.Fprintf(bw, "\nrank %d {\n", r)
		src := s.Rank(r)
		// own[i] is op i's label; done[i] the label whose completion means
		// op i is complete: its own, or that of the calc written after a
		// reducing receive.
		var own, done []int32
		var mark []int64 // 2 label + 1 or 2: label's op requires or irequires it
		next := int32(0) // next GOAL label number
		index := int32(0)
		for {
			buf = src.Next(buf[:0])
			if len(buf) == 0 {
				break
			}
			for i := range buf {
				op := &buf[i]
				if err := checkOp(int32(r), index, op, int32(s.Ranks)); err != nil {
					return err
				}
				label := next
				next++
				num = writeOp(bw, num, label, op, opt.ReducePsPerByte)
				// Each edge once (an algorithm may name an op twice), and
				// no irequires of what the op requires: as ParseGOAL reads
				// them, so that what is read writes the same text again.
				for len(mark) < int(next) {
					mark = append(mark, 0)
				}
				req, ireq := 2*int64(label)+1, 2*int64(label)+2
				for _, d := range op.After {
					if l := done[d]; mark[l] != req {
						mark[l] = req
						num = writeEdge(bw, num, label, " requires l", l)
					}
				}
				for _, d := range op.StartAfter {
					if l := own[d]; mark[l] != req && mark[l] != ireq {
						mark[l] = ireq
						num = writeEdge(bw, num, label, " irequires l", l)
					}
				}
				end := label
				if op.Kind == OpRecv && op.Reduce && opt.ReducePsPerByte > 0 && op.Bytes > 0 {
					// (A reduction of nothing takes no time, and no CPU: the
					// executor charges none, and a calc 0 would still queue for
					// the CPU; an audit.)
					end = next
					next++
					ns := (FromPicoseconds(float64(op.Bytes)*opt.ReducePsPerByte) + Nanosecond - 1) / Nanosecond
					calc := Op{Kind: OpCalc, Dur: ns * Nanosecond, CPU: op.CPU}
					num = writeOp(bw, num, end, &calc, 0)
					num = writeEdge(bw, num, end, " requires l", label)
				}
				own, done = append(own, label), append(done, end)
				index++
			}
		}
		bw.WriteString("}\n")
	}
	return bw.Flush()
}

// writeEdge writes "l<label><kind><dep>": a requires or irequires line,
// formatted without fmt (most of a schedule's lines are these: written
// with Fprintf, the 2,048-rank ring's 1.2 GB took 7.5-9.1 s against
// 4.1-5.2 s: collsim schedule -a ring -n 2048 -s 8, 3 alternated runs).
func writeEdge(bw *bufio.Writer, num []byte, label int32, kind string, dep int32) []byte {
	num = append(num[:0], 'l')
	num = strconv.AppendInt(num, int64(label), 10)
	num = append(num, kind...)
	num = strconv.AppendInt(num, int64(dep), 10)
	num = append(num, '\n')
	bw.Write(num)
	return num
}

func writeOp(bw *bufio.Writer, num []byte, label int32, op *Op, reducePs float64) []byte {
	num = append(num[:0], 'l')
	num = strconv.AppendInt(num, int64(label), 10)
	num = append(num, ": "...)
	switch op.Kind {
	case OpSend, OpRecv:
		if op.Kind == OpSend {
			num = append(num, "send "...)
		} else {
			num = append(num, "recv "...)
		}
		num = strconv.AppendInt(num, op.Bytes, 10)
		if op.Kind == OpSend {
			num = append(num, "b to "...)
		} else {
			num = append(num, "b from "...)
		}
		num = strconv.AppendInt(num, int64(op.Peer), 10)
		num = append(num, " tag "...)
		num = strconv.AppendInt(num, int64(op.Tag), 10)
		if op.CPU != 0 || op.NIC != 0 {
			num = append(num, " cpu "...)
			num = strconv.AppendInt(num, int64(op.CPU), 10)
			num = append(num, " nic "...)
			num = strconv.AppendInt(num, int64(op.NIC), 10)
		}
	case OpCalc:
		d := op.Dur + FromPicoseconds(float64(op.Bytes)*reducePs)
		num = append(num, "calc "...)
		num = strconv.AppendInt(num, int64((d+Nanosecond-1)/Nanosecond), 10)
		if op.CPU != 0 {
			num = append(num, " cpu "...)
			num = strconv.AppendInt(num, int64(op.CPU), 10)
		}
	}
	num = append(num, '\n')
	bw.Write(num)
	return num
}
