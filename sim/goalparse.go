package sim

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"

	"github.com/collsim/collsim/sim/hugepage"
)

// GOALError is a syntax or consistency error in GOAL text.
type GOALError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *GOALError) Error() string {
	if e.Col > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// goalParser reads GOAL text line by line, without regular expressions and
// without allocating per op beyond the compact arrays and label maps.
type goalParser struct {
	file    string
	in      *bufio.Reader
	line    int
	text    []byte // current line
	pos     int
	comment bool // inside /* */
	// commentLine is the line that opened the /* */ comment last opened.
	commentLine int
	shifts      []colShift // the current line's comments, for columns
	long        []byte     // a line longer than the reader's buffer, gathered
	// skimmed: the last long line ran past what is kept, and skimBlock
	// is whether it ended inside /* */.
	skimmed, skimBlock bool
	skimOpened         bool // the long line opened a /* */ comment
	g                  *GOAL
	labels             map[string]int32
	// numbered[i] is 1 + the op labelled l<i>, the labels that Schedgen
	// and collsim write: a slice look-up instead of a map insert per op.
	numbered []int32
	defined  []int // line of each op of the current rank, for error messages
	// opLines, when not nil, asks for the lines of some ops (rank and
	// index in the rank's program, as stored) and receives them
	// (GOAL.Locate's second reading of the file).
	opLines map[[2]int32]int
	edges   []goalEdge // the current rank's dependencies, as read
	seen    []int32    // finishRank's marks of dependencies already listed
	ops     []parsedOp // the current rank's ops, as read
	// Scratch for finishRank, reused from rank to rank.
	count, list, order, newIndex []int32
	// The ranks stored since their users were last listed (fillUsers):
	// from unitRank on, rank unitRank+i's dependencies (rank-local
	// indices, each op's After then StartAfter) begin at unitDeps[unitAt[i]];
	// unitStarts is whether some op among them irequires another, and
	// unitLists whether some op among them has users not in a run.
	// unitCounts holds, by id from unitRank's first, each op's After count
	// | its StartAfter count<<16. They are recorded only once unitLists
	// (recordDeps): fillUsers needs them to list users, and the
	// collectives' ops nearly all have their users in a run.
	unitRank   int
	unitDeps   []int32
	unitAt     []uint32
	unitCounts []uint32
	unitStarts bool
	unitLists  bool
	recording  bool        // whether unitDeps, unitAt and unitCounts are being recorded
	wasRun     [][2]uint32 // the id and former user word of each op that stopped being a run while recording was off
	runDeps    []int32     // recordRuns' scratch
	runWords   []int32     // recordRuns' scratch
	rankDeps   uint64      // the dependencies of the rank being stored
	ends       []uint32    // fillUnit's scratch: by rank of a block, where its next op's dependencies end
	// A rank's ops are stored in program order into rankOps, or, in a
	// block, into stage, a group of ranks side by side (stageRanks of
	// them from stageFrom, each in its own run of the layout's n), and
	// then copied into the table: in a block a rank's ops lie a block's
	// ranks apart, and writing a group's op i together writes whole cache
	// lines instead of a sixteenth of one each (stageGroup).
	rankOps    []goalOp
	stage      []goalOp
	stageFrom  int
	stageRanks int
	headers    [][3]uint32 // fillUsers' scratch: where each list's two words go in GOAL.users, and what they say
	cpus, nics denseIndex  // the schedule's CPU and NIC indices, as numbered for its run
}

// goalEdge is one "op requires dep" (or irequires, when start) as read.
type goalEdge struct {
	op, dep int32
	start   bool
}

// parsedOp is an op as read, before finishRank packs it into the schedule.
type parsedOp struct {
	kind      OpKind
	cpu, nic  uint16
	peer, tag int32
	value     int64 // bytes, or a calc's nanoseconds
}

// ParseGOAL reads a GOAL schedule. Errors name the file, line and column
// and what was expected. Memory follows the size of the input: a number of
// ranks is checked against the rank blocks that actually follow.
func ParseGOAL(r io.Reader, file string) (*GOAL, error) {
	p := newGOALParser(bufio.NewReaderSize(r, goalBuffer(r)), file)
	if err := p.parse(); err != nil {
		return nil, err
	}
	p.g.layout()
	return p.g, nil
}

func newGOALParser(in *bufio.Reader, file string) *goalParser {
	return &goalParser{file: file, in: in, g: &GOAL{file: file, CPUs: 1, NICs: 1, first: []uint32{0}, ready: []uint32{0}}}
}

// goalBuffer returns the size of the buffer ParseGOAL reads r through:
// 1 MiB, or less for a reader that says it holds less (strings.Reader,
// bytes.Reader). Against 64 KiB, the 1,024-rank ring's 314 MB took 0.58 s
// from the file to the result instead of 0.60-0.66 s (the mean of 6-8
// alternated runs on one core, /usr/bin/time): a fast path's run of
// lines (quickLines) ends at the buffer's end, and fewer, larger reads
// cost the kernel less.
func goalBuffer(r io.Reader) int {
	const most = 1 << 20
	if s, ok := r.(interface{ Size() int64 }); ok && s.Size() < most {
		return max(int(s.Size())+1, 4096)
	}
	return most
}

func (p *goalParser) errf(format string, args ...any) error {
	return &GOALError{File: p.file, Line: p.line, Col: p.column(p.pos), Msg: fmt.Sprintf(format, args...)}
}

// nextLine loads the next line without comments; false at end of input.
func (p *goalParser) nextLine() (bool, error) {
	for {
		raw, err := p.in.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if raw, err = p.longLine(raw); err != nil {
				return false, err
			}
		}
		if len(raw) == 0 && err != nil {
			if err == io.EOF {
				return false, p.unterminated()
			}
			return false, err
		}
		p.line++
		p.shifts = p.shifts[:0]
		p.text = p.stripComments(raw)
		if p.skimmed {
			if p.skimBlock && p.skimOpened { // the comment left open was opened on this line
				p.commentLine = p.line
			}
			p.comment, p.skimmed = p.skimBlock, false
		}
		p.pos = 0
		p.skipSpace()
		if p.pos < len(p.text) {
			return true, nil
		}
		if err == io.EOF { // a last line without a newline
			return false, p.unterminated()
		}
	}
}

// unterminated returns the error for a file that ends inside a /* */
// comment, at the line that opened it, or nil when it does not.
func (p *goalParser) unterminated() error {
	if !p.comment {
		return nil
	}
	return &GOALError{File: p.file, Line: p.commentLine, Msg: "unterminated /* comment: the file ends inside the comment opened on this line"}
}

// maxGOALLine bounds the text of a line that is kept: ops are short, and
// what runs past this on one line must be comment.
const maxGOALLine = 1 << 20

// longLine gathers a line longer than the reader's buffer, of which first
// has been read: up to maxGOALLine bytes are kept, and past them only
// comment may follow (a comment line of any length is valid GOAL), which
// is skimmed without being kept.
func (p *goalParser) longLine(first []byte) ([]byte, error) {
	p.long = p.long[:0]
	tail := commentState{block: p.comment}
	keep := func(raw []byte) {
		p.long = append(p.long, raw...)
		if len(p.long) >= maxGOALLine {
			tail = scanComments(tail, p.long) // where the kept text leaves off
			tail.text = false                 // text is kept up to here
		}
	}
	keep(first) // (as long as the buffer: maxGOALLine, or more)
	for {
		raw, err := p.in.ReadSlice('\n')
		switch {
		case len(p.long) < maxGOALLine:
			keep(raw)
		case !tail.line:
			tail = scanComments(tail, raw)
			if tail.text {
				return nil, &GOALError{File: p.file, Line: p.line + 1, Msg: fmt.Sprintf("line longer than %d bytes outside comments", maxGOALLine)}
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(p.long) >= maxGOALLine {
			p.skimmed, p.skimBlock, p.skimOpened = true, tail.block, tail.opened
		}
		if err == io.EOF && len(p.long) > 0 {
			err = nil
		}
		return p.long, err
	}
}

// commentState tracks comments across the skimmed part of a long line.
type commentState struct {
	block bool // inside /* */
	line  bool // inside // (the rest of the line is comment)
	slash bool // the last byte was '/' outside comments
	star  bool // the last byte was '*' inside /* */
	text  bool // a byte outside comments that is not space
	// opened: a /* */ comment opened (the one open at the end, if one
	// is, was opened on this line).
	opened bool
}

// scanComments advances s over b.
func scanComments(s commentState, b []byte) commentState {
	for _, c := range b {
		switch {
		case s.line:
			return s
		case s.block:
			s.block = !(s.star && c == '/')
			s.star = c == '*'
		case s.slash && c == '/':
			s.line, s.slash = true, false
		case s.slash && c == '*':
			s.block, s.slash, s.star, s.opened = true, false, false, true
		case c == '/':
			if s.slash {
				s.text = true
			}
			s.slash = true
		default:
			if s.slash || byteClass[c]&isSpace == 0 {
				s.text = true
			}
			s.slash = false
		}
	}
	return s
}

// stripComments removes // and /* */ comments, tracking comments that
// span lines. It reuses raw's memory.
func (p *goalParser) stripComments(raw []byte) []byte {
	if !p.comment && bytes.IndexByte(raw, '/') < 0 {
		return raw // most lines: no comment
	}
	// The text is compacted in place (a comment-only line writes nothing:
	// when files were mapped, writing a space for each comment byte copied
	// every page, and a file of comments parsed 2.7x slower); shifts records
	// how many bytes were dropped before each kept run, for columns.
	out := raw[:0]
	dropped := 0
	keep := func(c byte) {
		if n := len(p.shifts); dropped > 0 && (n == 0 || p.shifts[n-1].dropped != dropped) {
			p.shifts = append(p.shifts, colShift{at: len(out), dropped: dropped})
		}
		out = append(out, c)
	}
	for i := 0; i < len(raw); i++ {
		if p.comment {
			if raw[i] == '*' && i+1 < len(raw) && raw[i+1] == '/' {
				p.comment = false
				dropped++
				i++
			}
			dropped++
			continue
		}
		if raw[i] == '/' && i+1 < len(raw) {
			if raw[i+1] == '/' {
				break
			}
			if raw[i+1] == '*' {
				p.comment, p.commentLine = true, p.line
				keep(' ') // the comment parts the words around it
				dropped++
				i++
				continue
			}
		}
		keep(raw[i])
	}
	return out
}

// colShift says that from the compacted line's byte at on, dropped bytes
// of comment stand before it in the file.
type colShift struct{ at, dropped int }

// column returns the file's column of the current line's byte pos.
func (p *goalParser) column(pos int) int {
	col := pos + 1
	for _, s := range p.shifts {
		if s.at > pos {
			break
		}
		col = pos + 1 + s.dropped
	}
	return col
}

// byteClass tells, for each byte, whether it is space and whether it ends
// a word: one table look-up per byte of text.
var byteClass = func() (t [256]uint8) {
	for _, c := range " \t\r\n" {
		t[c] = isSpace | endsWord
	}
	for _, c := range ":{}" {
		t[c] = endsWord
	}
	return t
}()

const (
	isSpace  = 1
	endsWord = 2
)

func (p *goalParser) skipSpace() {
	for p.pos < len(p.text) && byteClass[p.text[p.pos]]&isSpace != 0 {
		p.pos++
	}
}

// word returns the next token: the bytes up to a space, ':', '{' or '}'.
func (p *goalParser) word() []byte {
	text, pos := p.text, p.pos
	for pos < len(text) && byteClass[text[pos]]&isSpace != 0 {
		pos++
	}
	start := pos
	for pos < len(text) && byteClass[text[pos]]&endsWord == 0 {
		pos++
	}
	p.pos = pos
	return text[start:pos]
}

// decimal parses a whole number, with an optional '-', that fits an int64.
func decimal(w []byte) (int64, bool) {
	neg := len(w) > 0 && w[0] == '-'
	if neg {
		w = w[1:]
	}
	if len(w) == 0 || len(w) > 19 {
		return 0, false
	}
	var v uint64
	for _, c := range w {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if v > math.MaxInt64 { // 19 digits cannot wrap a uint64
		return 0, false
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

func (p *goalParser) atEnd() bool {
	p.skipSpace()
	return p.pos >= len(p.text)
}

func (p *goalParser) expect(what string) error {
	w := p.word()
	if string(w) != what {
		p.pos -= len(w)
		return p.errf("expected %q, found %q", what, p.found(w))
	}
	return nil
}

// found names, for an error, what stands where a word was read: the word
// w, or when w is empty the character that ended it (a "}", ":" or "{"),
// or the end of the line.
func (p *goalParser) found(w []byte) string {
	if len(w) > 0 {
		return shorten(w)
	}
	i := p.pos
	for i < len(p.text) && byteClass[p.text[i]]&isSpace != 0 {
		i++
	}
	if i < len(p.text) {
		return string(p.text[i : i+1])
	}
	return "end of line"
}

func shorten(w []byte) string {
	if len(w) == 0 {
		return "end of line"
	}
	if len(w) > 40 {
		return string(w[:40]) + "..."
	}
	return string(w)
}

// integer reads a decimal integer in [lo, hi].
func (p *goalParser) integer(what string, lo, hi int64) (int64, error) {
	start := p.pos
	w := p.word()
	v, ok := decimal(w)
	if !ok || v < lo || v > hi {
		p.pos = start
		p.skipSpace()
		return 0, p.errf("expected %s, a whole number from %d to %d; found %q", what, lo, hi, p.found(w))
	}
	return v, nil
}

func (p *goalParser) parse() error {
	// A UTF-8 byte-order mark, as some editors write, is not text.
	if bom, _ := p.in.Peek(3); string(bom) == "\uFEFF" {
		p.in.Discard(3)
	}
	ok, err := p.nextLine()
	if err != nil {
		return err
	}
	if !ok {
		return &GOALError{File: p.file, Line: max(p.line, 1), Msg: "empty schedule: expected \"num_ranks <N>\""}
	}
	if bytes.HasPrefix(p.text[p.pos:], []byte{0x1f, 0x8b}) {
		// gzip's magic number: its bytes were printed as the word found.
		return &GOALError{File: p.file, Line: p.line, Msg: "the file is gzip-compressed: decompress it first (gunzip), collsim reads GOAL text"}
	}
	if err := p.expect("num_ranks"); err != nil {
		return err
	}
	n, err := p.integer("the number of ranks", 1, MaxRanks)
	if err != nil {
		return err
	}
	if !p.atEnd() {
		return p.errf("unexpected %q after num_ranks", p.found(p.word()))
	}
	p.g.Ranks = int(n)
	for r := 0; ; r++ {
		ok, err := p.nextLine()
		if err != nil {
			return err
		}
		if !ok {
			if r < p.g.Ranks {
				return &GOALError{File: p.file, Line: p.line, Msg: fmt.Sprintf("the file ends after %d rank blocks; num_ranks says %d (truncated file?)", r, p.g.Ranks)}
			}
			return nil
		}
		if r == p.g.Ranks {
			if w := p.word(); string(w) != "rank" {
				p.pos -= len(w)
				return p.errf("unexpected %q after the last rank block (num_ranks %d)", p.found(w), p.g.Ranks)
			}
			p.pos -= len("rank")
			return p.errf("more rank blocks than num_ranks %d", p.g.Ranks)
		}
		if err := p.expect("rank"); err != nil {
			return err
		}
		got, err := p.integer("a rank number", 0, MaxRanks)
		if err != nil {
			return err
		}
		if got != int64(r) {
			return p.errf("rank %d's block found where rank %d's should be; blocks must come in order 0..%d, each once", got, r, p.g.Ranks-1)
		}
		p.skipSpace()
		if p.pos >= len(p.text) || p.text[p.pos] != '{' {
			return p.errf("expected \"{\" after rank %d", r)
		}
		p.pos++
		if err := p.rankBody(r); err != nil {
			return err
		}
	}
}

// rankBody reads the statements of rank r up to its closing brace.
func (p *goalParser) rankBody(r int) error {
	clear(p.labels)
	if p.labels == nil {
		p.labels = map[string]int32{}
	}
	clear(p.numbered)
	p.defined = p.defined[:0]
	p.edges = p.edges[:0]
	ops := p.ops[:0]
	open := p.line
	for {
		if p.atEnd() {
			if quickStatements && !p.comment {
				ops = p.quickLines(ops)
			}
			ok, err := p.nextLine()
			if err != nil {
				return err
			}
			if !ok {
				return &GOALError{File: p.file, Line: open, Msg: fmt.Sprintf("rank %d's block is never closed with \"}\" (truncated file?)", r)}
			}
		}
		if p.text[p.pos] == '}' {
			p.pos++
			if !p.atEnd() {
				return p.errf("unexpected %q after \"}\"", p.found(p.word()))
			}
			p.ops = ops
			return p.finishRank(r, ops)
		}
		var op parsedOp
		isOp, quick := p.quickStatement(len(ops), &op)
		if !quick {
			var err error
			if isOp, err = p.statement(r, len(ops), &op); err != nil {
				return err
			}
		}
		if isOp {
			ops = append(ops, op)
			p.defined = append(p.defined, p.line)
		}
		if !p.atEnd() {
			return p.errf("unexpected %q; one statement per line", p.found(p.word()))
		}
	}
}

// quickLines reads the lines that follow, straight from the reader's
// buffer, as long as usualLine or quickLine reads each whole, appending
// their ops to ops. It stops, leaving the rest to nextLine, at the first
// line it does not read (a comment in it, a closing brace, any other
// form) and at the end of what the reader holds. Reading the usual lines this way skips
// nextLine's work on each (bufio's ReadSlice, the search for comments,
// skipping space): the 1,024-rank ring's 12.6 million lines took 0.75 s
// instead of 0.86-1.07 s (the command line's parse_s, 3 alternated runs).
func (p *goalParser) quickLines(ops []parsedOp) []parsedOp {
	buf, _ := p.in.Peek(p.in.Buffered())
	done := 0
	for {
		var op parsedOp
		n, isOp := p.usualLine(buf[done:], len(ops), &op)
		if n == 0 {
			if n, isOp = p.quickLine(buf[done:], false, len(ops), &op); n == 0 {
				break
			}
		}
		p.line++
		if isOp {
			ops = append(ops, op)
			p.defined = append(p.defined, p.line)
		}
		done += n
	}
	p.in.Discard(done)
	return ops
}

// usualLine reads the usual lines of a schedule, exactly so: "l<a>
// requires l<b>", "l<a>: send <n>b to <p>", "l<a>: recv <n>b from <p>",
// either with " tag <t>", and "l<a>: calc <n>", each with its newline,
// one space between words, labels l<i> (numberedLabel) and numbers of
// up to 8 digits, read 8 bytes at a time (eightDigits: a ninth digit is
// not the byte that must follow). It does with such a line what quickLine
// does (a requires line's labels defined in p.numbered; an op's label
// new, and none kept in p.labels) and returns its length and whether it
// is an op, or 0 for any other line, which quickLine then reads, or not.
// The collsim and Schedgen schedules are made of these lines, two of
// three of them requires lines: read by quickLine, a 256-rank ring's
// parse ran 540 instructions a line.
func (p *goalParser) usualLine(t []byte, index int, op *parsedOp) (n int, isOp bool) {
	// 64 bytes cover the longest such line read 8 bytes at a time: "l",
	// 8 digits, ": recv ", 8 digits, "b from ", 8 digits, " tag ", 8
	// digits and "\n" are 53 bytes.
	if len(t) < 64 || t[0] != 'l' {
		return 0, false
	}
	a, k := eightDigits(t[1:])
	i := 1 + k // after a's digits
	if !numberedLabel(a, k, t[1]) {
		return 0, false
	}
	if t[i] == ':' {
		return p.usualOp(t, i, a, index, op), true
	}
	if binary.LittleEndian.Uint64(t[i:]) != requiresWord || binary.LittleEndian.Uint16(t[i+8:]) != requiresEnd || t[i+10] != 'l' {
		return 0, false
	}
	i += 11
	b, m := eightDigits(t[i:])
	if !numberedLabel(b, m, t[i]) || t[i+m] != '\n' ||
		a >= len(p.numbered) || b >= len(p.numbered) || p.numbered[a] == 0 || p.numbered[b] == 0 || a == b {
		return 0, false
	}
	p.edges = append(p.edges, goalEdge{op: p.numbered[a] - 1, dep: p.numbered[b] - 1})
	return i + m + 1, false
}

// usualOp is usualLine for an op labelled l<a>, whose colon is t[i]: the
// length of the line, or 0.
func (p *goalParser) usualOp(t []byte, i, a, index int, op *parsedOp) int {
	// A label defined before is for quickOp to report, and so is every
	// op of a rank with a label kept in p.labels (where l<a> may be).
	if a < len(p.numbered) && p.numbered[a] > 0 || len(p.labels) > 0 {
		return 0
	}
	at := i + 7 // after ": send "
	var kind OpKind
	switch binary.LittleEndian.Uint64(t[i+1:]) & (1<<48 - 1) {
	case sendWord:
		kind = OpSend
	case recvWord:
		kind = OpRecv
	case calcWord:
		d, n := eightDigits(t[at:])
		if n == 0 || t[at+n] != '\n' {
			return 0
		}
		*op = parsedOp{kind: OpCalc, value: int64(d)}
		p.defineLabel(t[:i], a, int32(index))
		return at + n + 1
	default:
		return 0
	}
	size, n := eightDigits(t[at:])
	at += n
	if n == 0 || t[at] != 'b' {
		return 0
	}
	at++
	switch {
	case kind == OpSend && binary.LittleEndian.Uint32(t[at:]) == toWord:
		at += 4
	case kind == OpRecv && binary.LittleEndian.Uint64(t[at:])&(1<<48-1) == fromWord:
		at += 6
	default:
		return 0
	}
	peer, n := eightDigits(t[at:])
	at += n
	if n == 0 || peer > p.g.Ranks-1 {
		return 0
	}
	tag := 0
	if binary.LittleEndian.Uint64(t[at:])&(1<<40-1) == tagWord {
		if tag, n = eightDigits(t[at+5:]); n == 0 {
			return 0
		}
		at += 5 + n
	}
	if t[at] != '\n' {
		return 0
	}
	*op = parsedOp{kind: kind, value: int64(size), peer: int32(peer), tag: int32(tag)}
	p.defineLabel(t[:i], a, int32(index))
	return at + 1
}

// The words usualLine compares, as little-endian words of their bytes:
// " requires " (its first 8 bytes and its last 2), " send ", " recv ",
// " calc ", " from " (6 bytes), " to " (4) and " tag " (5).
const (
	requiresWord = ' ' | 'r'<<8 | 'e'<<16 | 'q'<<24 | 'u'<<32 | 'i'<<40 | 'r'<<48 | 'e'<<56
	requiresEnd  = 's' | ' '<<8
	sendWord     = ' ' | 's'<<8 | 'e'<<16 | 'n'<<24 | 'd'<<32 | ' '<<40
	recvWord     = ' ' | 'r'<<8 | 'e'<<16 | 'c'<<24 | 'v'<<32 | ' '<<40
	calcWord     = ' ' | 'c'<<8 | 'a'<<16 | 'l'<<24 | 'c'<<32 | ' '<<40
	fromWord     = ' ' | 'f'<<8 | 'r'<<16 | 'o'<<24 | 'm'<<32 | ' '<<40
	toWord       = ' ' | 't'<<8 | 'o'<<16 | ' '<<24
	tagWord      = ' ' | 't'<<8 | 'a'<<16 | 'g'<<24 | ' '<<32
)

// statement reads one op (returned) or one dependency (nil).
func (p *goalParser) statement(r, index int, op *parsedOp) (bool, error) {
	startPos := p.pos
	first := p.word()
	if len(first) == 0 {
		return false, p.errf("expected a statement, found %q", string(p.text[p.pos:p.pos+1]))
	}
	var label []byte
	if p.pos < len(p.text) && p.text[p.pos] == ':' {
		p.pos++
		label = first
		if !validLabel(label) {
			p.pos = startPos
			return false, p.errf("label %q: a label is an ASCII letter or _ followed by letters, digits and _", p.found(label))
		}
		if _, dup := p.lookup(label); dup {
			p.pos = startPos
			return false, p.errf("label %q is defined twice in rank %d", label, r)
		}
		first = p.word()
	}
	*op = parsedOp{}
	switch string(first) {
	case "send", "recv":
		op.kind = OpSend
		dir, what := "to", "a destination rank"
		if first[0] == 'r' {
			op.kind, dir, what = OpRecv, "from", "a source rank (-1 for any)"
		}
		size, err := p.bytesSize()
		if err != nil {
			return false, err
		}
		op.value = size
		if err := p.expect(dir); err != nil {
			return false, err
		}
		lo := int64(0)
		if op.kind == OpRecv {
			lo = -1
		}
		peer, err := p.integer(what, lo, int64(p.g.Ranks-1))
		if err != nil {
			return false, err
		}
		op.peer = int32(peer)
		if err := p.options(op, true); err != nil {
			return false, err
		}
	case "calc":
		d, err := p.integer("a duration in nanoseconds", 0, math.MaxInt64/1000)
		if err != nil {
			return false, err
		}
		op.kind, op.value = OpCalc, d
		if err := p.options(op, false); err != nil {
			return false, err
		}
	default:
		if label != nil {
			p.pos -= len(first)
			return false, p.errf("expected send, recv or calc after label %q, found %q", label, p.found(first))
		}
		if _, defined := p.lookup(first); !defined && string(first) == "rank" {
			// A block whose "}" is missing runs into the next one, whose
			// "rank" read as an undefined label (a new user's trial).
			p.pos = startPos
			return false, p.errf("\"rank\" inside rank %d's block: is the \"}\" closing rank %d's block missing before this line?", r, r)
		}
		return false, p.dependency(first, startPos)
	}
	if label != nil {
		p.define(label, int32(index))
	}
	return true, nil
}

// quickStatements is whether rankBody reads the usual forms of statement
// by quickLines and quickStatement before the general path (tests turn it
// off to compare the two paths; none of the package's tests runs in
// parallel with them).
var quickStatements = true

// quickStatement reads the statement at p.pos when it is in one of the
// forms collsim and Schedgen write, with single spaces between words,
// labels beginning with 'l' (l<i> in what they write) and numbers without
// signs:
//
//	l<i>: send <n>b to <peer> [tag <t>]
//	l<i>: recv <n>b from <peer> [tag <t>]
//	l<i>: calc <ns>
//	<a> requires <b>
//	<a> irequires <b>
//
// It does what statement does with such a line, in one pass over it, and
// reports whether it did. For any other line, and any it would reject, it
// changes nothing: statement reads it, and words its errors.
func (p *goalParser) quickStatement(index int, op *parsedOp) (isOp, ok bool) {
	if !quickStatements {
		return false, false
	}
	n, isOp := p.quickLine(p.text[p.pos:], true, index, op)
	if n == 0 {
		return false, false
	}
	p.pos = len(p.text) // the text is one line: quickLine read it all
	return isOp, true
}

// quickLine reads the statement t begins (at the start of a line, or
// after "rank r {"), as quickStatement does, whether or not the quick path
// is on, and leaves p.pos alone: it returns the length of what it read, up
// to and with the line's newline, or 0 if it did not read the statement,
// and whether the statement is an op (else a dependency). The line ends at
// a newline, or at the end of t when whole (t then holds the rest of the
// line; else a line t cuts short is not read).
func (p *goalParser) quickLine(t []byte, whole bool, index int, op *parsedOp) (n int, isOp bool) {
	if len(t) < 2 || t[0] != 'l' {
		return 0, false
	}
	i, number := readLabel(t)
	if i == len(t) {
		return 0, false
	}
	if t[i] == ':' {
		n := p.quickOp(t[:i], number, t[i+1:], whole, index, op)
		if n == 0 {
			return 0, false
		}
		return i + 1 + n, true
	}
	// A dependency: the first word is not send, recv or calc, which do
	// not begin with 'l'.
	rest := t[i:]
	start := false
	switch {
	case len(rest) >= 10 && string(rest[:10]) == " requires ":
		rest = rest[10:]
	case len(rest) >= 11 && string(rest[:11]) == " irequires ":
		rest, start = rest[11:], true
	default:
		return 0, false
	}
	j, numberB := readLabel(rest)
	end := lineEnd(rest, j, whole)
	if j == 0 || end == 0 {
		return 0, false
	}
	ai, okA := p.lookupLabel(t[:i], number)
	bi, okB := p.lookupLabel(rest[:j], numberB)
	if !okA || !okB || ai == bi {
		return 0, false
	}
	p.edges = append(p.edges, goalEdge{op: ai, dep: bi, start: start})
	return len(t) - len(rest) + end, false
}

// quickOp is quickLine for an op labelled label (number: labelNumber's),
// whose text after the colon is t: it returns the length of what it read
// of t (0 if it did not read the op), and the op in op.
func (p *goalParser) quickOp(label []byte, number int, t []byte, whole bool, index int, op *parsedOp) int {
	if number < 0 && !validLabel(label) || len(t) < 6 {
		return 0
	}
	if _, dup := p.lookupLabel(label, number); dup {
		return 0
	}
	var kind OpKind
	at := 6 // where what is left of t begins
	switch {
	case string(t[:6]) == " send ":
		kind = OpSend
	case string(t[:6]) == " recv ":
		kind = OpRecv
	case string(t[:6]) == " calc ":
		d, n := leadingNumber(t[at:])
		end := lineEnd(t, at+n, whole)
		if n == 0 || d > math.MaxInt64/1000 || end == 0 {
			return 0
		}
		*op = parsedOp{kind: OpCalc, value: d}
		p.defineLabel(label, number, int32(index))
		return end
	default:
		return 0
	}
	size, n := leadingNumber(t[at:])
	at += n
	// At most 18 digits: below 2^62, the largest size.
	if n == 0 || at == len(t) || t[at] != 'b' {
		return 0
	}
	at++
	switch rest := t[at:]; {
	case kind == OpSend && len(rest) >= 4 && string(rest[:4]) == " to ":
		at += 4
	case kind == OpRecv && len(rest) >= 6 && string(rest[:6]) == " from ":
		at += 6
	default:
		return 0
	}
	peer, n := leadingNumber(t[at:])
	if n == 0 || peer > int64(p.g.Ranks-1) {
		return 0
	}
	at += n
	tag := int64(0)
	if rest := t[at:]; len(rest) >= 5 && string(rest[:5]) == " tag " {
		if tag, n = leadingNumber(rest[5:]); n == 0 || tag > math.MaxInt32 {
			return 0
		}
		at += 5 + n
	}
	end := lineEnd(t, at, whole)
	if end == 0 {
		return 0
	}
	*op = parsedOp{kind: kind, value: size, peer: int32(peer), tag: int32(tag)}
	p.defineLabel(label, number, int32(index))
	return end
}

// lineEnd returns the length of the line t begins when t[i:] is space up
// to its end: up to and with a newline, or len(t) when whole and t has
// none; 0 when anything else comes first, or t ends first and is not
// whole. Callers pass i >= 1, so 0 never stands for a line read.
func lineEnd(t []byte, i int, whole bool) int {
	for ; i < len(t); i++ {
		switch c := t[i]; {
		case c == '\n':
			return i + 1
		case byteClass[c]&isSpace == 0:
			return 0
		}
	}
	if whole {
		return len(t)
	}
	return 0
}

// wordEnd returns where the word of t that goes on at i ends: at a space,
// ':', '{' or '}', or the end of t (as word does).
func wordEnd(t []byte, i int) int {
	for i < len(t) && byteClass[t[i]]&endsWord == 0 {
		i++
	}
	return i
}

// leadingNumber returns the whole number t begins with and its length in
// digits: 0 when t begins with no digit or with more than 18, which could
// leave an int64 (decimal, which reads them, says what is wrong).
func leadingNumber(t []byte) (int64, int) {
	if len(t) >= 8 {
		if v, n := eightDigits(t); n < 8 {
			return int64(v), n
		}
	}
	v, n := int64(0), 0
	for n < len(t) && n <= 18 && t[n] >= '0' && t[n] <= '9' {
		v = v*10 + int64(t[n]-'0')
		n++
	}
	if n > 18 {
		return 0, 0
	}
	return v, n
}

// eightDigits returns how many of t's first 8 bytes (t has 8 or more)
// are decimal digits before the first that is not, and the number they
// write. It reads the 8 bytes as one word, so the number's length costs
// no branch: read a byte at a time, the label and number loops took 30%
// of a ring's parse, much of it in mispredicted loop exits (numbers of
// 1 to 4 digits in turn).
func eightDigits(t []byte) (value, n int) {
	x := binary.LittleEndian.Uint64(t)
	const ones = 0x0101010101010101
	// A byte is a digit when its high nibble is 3 both as it is and
	// plus 6 ('9'+6 is '?'; ':' to '?' plus 6 carry into the nibble). A
	// byte of 0xfa or more, plus 6, carries into the next byte, which
	// is after a non-digit and does not count.
	notDigit := (x&(0xf0*ones) ^ 0x30*ones) | ((x+6*ones)&(0xf0*ones) ^ 0x30*ones)
	n = bits.TrailingZeros64(notDigit) / 8
	if n == 0 {
		return 0, 0
	}
	// Keep the n digits' values, the last of them in the top byte: the
	// bytes before are zeros, leading zeros of an 8-digit number, which
	// three multiplications combine, pairs, then quads, then halves
	// (each product's high part is the combined value).
	d := (x & (0x0f * ones)) << (64 - 8*n)
	d = (d * (1 + 10<<8)) >> 8 & 0x00ff00ff00ff00ff
	d = (d * (1 + 100<<16)) >> 16 & 0x0000ffff0000ffff
	d = (d * (1 + 10000<<32)) >> 32
	return int(d), n
}

// validLabel reports whether label is an identifier of GOAL's grammar:
// an ASCII letter or '_', then letters, digits and '_' (no look-alike
// Unicode or bidi controls that would show another label than is read).
func validLabel(label []byte) bool {
	for i, c := range label {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return len(label) > 0
}

// labelNumber returns i for a label "l<i>" (i < 2^24, no leading zeros),
// else -1.
func labelNumber(label []byte) int {
	if end, number := readLabel(label); end == len(label) {
		return number
	}
	return -1
}

// readLabel returns where the word t begins ends (as wordEnd) and, when
// that word is a label l<i> (numberedLabel), i, else -1: for the usual
// l<i>, in the one pass that finds its end.
func readLabel(t []byte) (end, number int) {
	if len(t) == 0 || t[0] != 'l' {
		return wordEnd(t, 0), -1
	}
	digits := t
	if len(t) < 9 { // eightDigits reads 8 bytes after the l: pad with zeros, which are not digits
		var padded [9]byte
		copy(padded[:], t)
		digits = padded[:]
	}
	number, n := eightDigits(digits[1:])
	if end = 1 + n; numberedLabel(number, n, digits[1]) && (end == len(t) || byteClass[t[end]]&endsWord != 0) {
		return end, number
	}
	return wordEnd(t, 1), -1
}

// numberedLabel reports whether the n digits after a label's l, the
// first of them first, which write number, make it a label l<i> that
// p.numbered may hold: i < 2^24, without leading zeros (so at most 8
// digits).
func numberedLabel(number, n int, first byte) bool {
	return n > 0 && (first != '0' || n == 1) && number < 1<<24
}

// lookup returns the index of the op labelled label, if one is.
func (p *goalParser) lookup(label []byte) (int32, bool) {
	return p.lookupLabel(label, labelNumber(label))
}

// lookupLabel is lookup for a label whose labelNumber is number (-1 for
// none).
func (p *goalParser) lookupLabel(label []byte, number int) (int32, bool) {
	if number >= 0 && number < len(p.numbered) && p.numbered[number] > 0 {
		return p.numbered[number] - 1, true
	}
	if len(p.labels) == 0 {
		return 0, false
	}
	i, ok := p.labels[string(label)]
	return i, ok
}

// define records label for the op at index. A label l<n> goes to the
// slice while n stays near the number of ops read (the labels collsim and
// Schedgen write count the ops), any other to the map: memory follows the
// text, not the numbers in it ("l16777215" alone costs no 64 MB slice).
func (p *goalParser) define(label []byte, index int32) {
	p.defineLabel(label, labelNumber(label), index)
}

// defineLabel is define for a label whose labelNumber is number (-1 for
// none).
func (p *goalParser) defineLabel(label []byte, number int, index int32) {
	if number >= 0 && number <= 2*int(index)+1024 {
		if number >= len(p.numbered) {
			p.numbered = append(p.numbered, make([]int32, number+1-len(p.numbered))...)
		}
		p.numbered[number] = index + 1
		return
	}
	p.labels[string(label)] = index
}

// bytesSize reads "<n>b", or "<n> b": LogGOPSim's txt2bin takes blanks
// between the number and its b (an audit found collsim refusing them).
func (p *goalParser) bytesSize() (int64, error) {
	p.skipSpace()
	start := p.pos
	w := p.word()
	digits := w
	switch {
	case len(w) >= 2 && w[len(w)-1] == 'b':
		digits = w[:len(w)-1]
	case len(w) >= 1 && p.spacedB():
	default:
		p.pos = start
		return 0, p.errf("expected a size in bytes such as 1024b, found %q", p.found(w))
	}
	v, ok := decimal(digits)
	if !ok || v < 0 || v > 1<<62 {
		p.pos = start
		return 0, p.errf("size %q is not a whole number of bytes from 0 to 2^62", p.found(w))
	}
	return v, nil
}

// spacedB reports whether the line goes on with blanks and a lone "b"
// word, and if so reads past it.
func (p *goalParser) spacedB() bool {
	save := p.pos
	if w := p.word(); len(w) == 1 && w[0] == 'b' && p.pos > save+1 {
		return true
	}
	p.pos = save
	return false
}

// options reads "tag t", "cpu c", "nic n" in that order (tag only for
// messages).
func (p *goalParser) options(op *parsedOp, message bool) error {
	seen := 0
	for !p.atEnd() {
		start := p.pos
		w := string(p.word())
		order := 0
		switch w {
		case "tag":
			order = 1
		case "cpu":
			order = 2
		case "nic":
			order = 3
		}
		if order == 0 || order == 1 && !message || order == 3 && !message || order <= seen {
			p.pos = start
			valid := "tag, cpu, nic (in that order)"
			if !message {
				valid = "cpu"
			}
			return p.errf("unexpected %q; expected %s or the end of the line", p.found([]byte(w)), valid)
		}
		seen = order
		switch w {
		case "tag":
			t, err := p.integer("a tag (-1 for any, receives only)", -1, math.MaxInt32)
			if err != nil {
				return err
			}
			if t < 0 && op.kind == OpSend {
				return p.errf("a send needs a definite tag, not -1")
			}
			op.tag = int32(t)
		case "cpu", "nic":
			v, err := p.integer("a "+w+" index", 0, 1<<16-1)
			if err != nil {
				return err
			}
			used, count := &p.cpus, &p.g.CPUs
			if w == "nic" {
				used, count = &p.nics, &p.g.NICs
			}
			i := used.index(uint16(v))
			if clocks := int64(p.g.Ranks) * int64(used.n); clocks > int64(maxHostSlots) {
				p.pos = start
				return p.errf("%s %d makes %d distinct %s indices in a schedule of %d ranks: a run keeps a clock for each %s of each rank, %d in all, more than the %d it allows; use fewer distinct %s indices",
					w, v, used.n, w, p.g.Ranks, w, clocks, maxHostSlots, w)
			}
			*count = used.n
			if w == "cpu" {
				op.cpu = i
			} else {
				op.nic = i
			}
		}
	}
	return nil
}

// denseIndex numbers the distinct CPU (or NIC) indices of a schedule in
// the order they first appear, 0 always first (an op without the option
// runs on 0): a run keeps a clock per rank for each, so that a file whose
// one op says "cpu 65535" costs two clocks a rank, not 65,536 (4,096
// ranks had taken 16 GB). A rank's CPUs are alike, so which number each
// gets changes nothing that is simulated.
type denseIndex struct {
	of []uint16 // by index as written: its number, 0 for none but index 0
	n  int      // how many are numbered
}

// index returns the number of v, numbering it if it is new.
func (d *denseIndex) index(v uint16) uint16 {
	if d.n == 0 {
		d.n = 1 // 0 is numbered 0
	}
	if v == 0 {
		return 0
	}
	if d.of == nil {
		d.of = make([]uint16, 1<<16)
	}
	if d.of[v] == 0 {
		d.of[v] = uint16(d.n)
		d.n++
	}
	return d.of[v]
}

// maxHostSlots bounds ranks times distinct CPU (or NIC) indices: the
// clocks of a run's hosts, 8 bytes each (512 MB; tests lower it).
var maxHostSlots = 1 << 26

// dependency reads "A requires B" or "A irequires B" (A already read).
func (p *goalParser) dependency(a []byte, startPos int) error {
	ai, ok := p.lookup(a)
	if !ok {
		p.pos = startPos
		return p.errf("%q is not a label defined earlier in this rank, nor send, recv or calc", a)
	}
	kindPos := p.pos
	kind := p.word()
	start := string(kind) == "irequires"
	if !start && string(kind) != "requires" {
		p.pos = kindPos
		p.skipSpace()
		return p.errf("expected requires or irequires after %q, found %q", a, p.found(kind))
	}
	bPos := p.pos
	b := p.word()
	bi, ok := p.lookup(b)
	if !ok {
		p.pos = bPos
		p.skipSpace()
		return p.errf("label %q is not defined before this line", b)
	}
	if ai == bi {
		return p.errf("op %q cannot depend on itself", a)
	}
	p.edges = append(p.edges, goalEdge{op: ai, dep: bi, start: start})
	return nil
}

// finishRank orders rank r's ops so that every dependency points to an
// earlier op (GOAL allows any order; a stable topological sort keeps the
// written order where it can) and stores them, rank by rank; layout gives
// them their ids once every rank is read.
func (p *goalParser) finishRank(r int, ops []parsedOp) error {
	g := p.g
	n := len(ops)
	first := g.first[r]
	if uint64(first)+uint64(n) >= math.MaxUint32 {
		return &GOALError{File: p.file, Line: p.line, Msg: fmt.Sprintf("more than %d ops", uint32(math.MaxUint32-1))}
	}
	if n > maxRankOps {
		return &GOALError{File: p.file, Line: p.line, Msg: fmt.Sprintf("rank %d has %d ops, more than the %d one rank may have", r, n, maxRankOps)}
	}
	zero := uint32(0) // ops without dependencies
	var err error
	p.rankDeps = 0
	if finishInOrder && edgesInOrder(p.edges) {
		zero, err = p.storeInOrder(r, ops)
	} else {
		zero, err = p.sortAndStore(r, ops)
	}
	if err != nil {
		return err
	}
	if p.opLines != nil {
		p.noteLines(r, n)
	}
	p.commit(r)
	// Counted once each (a repeat, or an irequires of a required op, is
	// not one), before their users are listed.
	if g.nDeps += p.rankDeps; g.nDeps > maxDeps {
		return &GOALError{File: p.file, Line: p.line, Msg: fmt.Sprintf("more than %d dependencies", maxDeps)}
	}
	g.first = append(g.first, first+uint32(n))
	g.ready = append(g.ready, g.ready[r]+zero)
	// Users are listed a block of ranks at a time, once the block is read,
	// or a rank at a time where ranks are stored by id.
	if !g.lay.blocked(r) || (r+1)&(1<<g.lay.shift-1) == 0 {
		return p.fillUsers(r + 1)
	}
	return nil
}

// noteLines records, for the ops of rank r (n of them) asked for in
// p.opLines, the line that defined each: the op at index k of the rank's
// program is the k-th read (storeInOrder) or the one sortAndStore's order
// put there.
func (p *goalParser) noteLines(r, n int) {
	sorted := !(finishInOrder && edgesInOrder(p.edges))
	for key := range p.opLines {
		if int(key[0]) != r || key[1] < 0 || int(key[1]) >= n {
			continue
		}
		read := key[1]
		if sorted {
			read = p.order[read]
		}
		p.opLines[key] = p.defined[read]
	}
}

// maxDeps is the most dependencies a schedule may have: a users list's
// end is a uint32 (tests lower it).
var maxDeps uint64 = math.MaxUint32 - 1

// maxRankOps is the most ops one rank may have: the parser keys a rank's
// edges by 2*op + kind in an int32 (tests lower it).
var maxRankOps = 1<<30 - 1

// finishInOrder is whether finishRank takes storeInOrder's way when it
// can (tests compare the two ways).
var finishInOrder = true

// edgesInOrder reports whether every edge points back, to an op written
// before its own, and the edges come by op, an op's requires before its
// irequires: the order collsim and Schedgen write them in, where
// storeInOrder needs no sort.
func edgesInOrder(edges []goalEdge) bool {
	last := int32(0) // the last edge's op and kind, as 2*op + start
	for _, e := range edges {
		key := 2*e.op + b2i(e.start)
		if key < last || e.dep > e.op {
			return false
		}
		last = key
	}
	return true
}

// storeInOrder stores rank r's ops (see finishRank) when edgesInOrder:
// the ops keep their order, and each op's edges follow the previous op's,
// so one pass over the ops and their edges drops the repeats (as
// sortAndStore does) and stores them. It returns the number of ops
// without dependencies.
func (p *goalParser) storeInOrder(r int, ops []parsedOp) (uint32, error) {
	g := p.g
	first := g.first[r]
	dst := p.place(r, len(ops))
	seen := resize(&p.seen, len(ops)) // 1 + the last key (2*op + start) that listed each op
	edges := p.edges
	zero := uint32(0)
	for k := range ops {
		m := 0
		for m < len(edges) && edges[m].op == int32(k) {
			m++
		}
		// After then StartAfter: requires come first (edgesInOrder), and an
		// irequires of a required op adds nothing.
		list, nAfter := p.list[:0], 0
		after := int32(2*k) + 1 // seen's mark for op k's requires
		for _, e := range edges[:m] {
			switch d := e.dep; {
			case !e.start && seen[d] != after:
				seen[d] = after
				list = append(list, d)
				nAfter++
			case e.start && seen[d] != after && seen[d] != after+1:
				seen[d] = after + 1
				list = append(list, d)
			}
		}
		edges, p.list = edges[m:], list
		if len(list) > math.MaxUint16 {
			return 0, &GOALError{File: p.file, Line: p.defined[k], Msg: "more than 65535 dependencies on one op"}
		}
		var o goalOp
		if p.recording {
			p.unitCounts = append(p.unitCounts, uint32(nAfter)|uint32(len(list)-nAfter)<<16)
		}
		if err := p.pack(&o, &ops[k], first+uint32(k), p.defined[k]); err != nil {
			return 0, err
		}
		p.rankDeps += uint64(len(list))
		// (Written out here and in sortAndStore: as a call, the ring's parse
		// took 0.58 s instead of 0.52 s.)
		for j, d := range list {
			if p.recording {
				// (One append per dependency: appending the list, most often
				// of one or two, called memmove for each op, 2% of a run.)
				p.unitDeps = append(p.unitDeps, d)
			}
			if !p.addUser(&dst[d], first+uint32(d), uint32(k-int(d)), j >= nAfter) {
				return 0, &GOALError{File: p.file, Line: p.defined[d], Msg: "more than 65535 ops depend on this one"}
			}
		}
		if p.unitLists && !p.recording {
			p.recordDeps(r, k, len(ops), list[:nAfter], list[nAfter:], nil)
		}
		if len(list) == 0 {
			g.zeros.add(first + uint32(k))
			zero++
		}
		dst[k] = o
	}
	return zero, nil
}

// addUser counts the op next ops after u (whose id is id) in their rank's
// program as a user of u: one that irequires it when start, else requires
// it; false if u has 65535 users of that kind already. Ops are stored in
// program order, so u's users come in that order: they are a run
// (usersOf) while each requires u and follows the last, up to
// runUsersMost of them, or while there is one, which irequires it. (A
// user that requires u after one that irequires it cannot follow it: an
// op both requiring and irequiring u only requires it.) Once they are not
// a run, u.user counts them until fillUsers lists them: those that
// require u | those that irequire it << 16 (the run they were is kept in
// wasRun while the unit's dependencies are not being recorded).
func (p *goalParser) addUser(u *goalOp, id, next uint32, start bool) bool {
	if start {
		p.unitStarts = true
	}
	if u.val&valRun != 0 {
		n := u.user >> runShift
		switch {
		case n == 0 && start:
			u.user = next | runStart<<runShift
			return true
		case n == 0:
			u.user = next | 1<<runShift
			return true
		case !start && n < runUsersMost && u.user&runNextMask+n == next:
			u.user += 1 << runShift
			return true
		}
		// No longer a run: count its users so far.
		u.val &^= valRun
		p.unitLists = true
		if !p.recording {
			p.wasRun = append(p.wasRun, [2]uint32{id, u.user})
		}
		if u.user = n; n == runStart {
			u.user = 1 << 16
		}
	}
	shift := uint32(0)
	if start {
		shift = 16
	}
	if u.user>>shift&math.MaxUint16 == math.MaxUint16 {
		return false // it has 65535
	}
	u.user += 1 << shift
	return true
}

// maxBig is how many sizes and durations too large for an op's val a
// schedule may have: as many as its low bits can index (tests lower it).
var maxBig = valMask + 1

// unitDepsPerOp bounds the dependencies an op of a unit of ranks is
// given room for ahead (place): the collectives' ops have one or two.
const unitDepsPerOp = 4

// place starts storing rank r, of n ops: where its dependencies begin,
// and where its ops go (opLayout; rank 0 sets the blocks' op count, and a
// rank that differs ends the blocks: the ranks of its block read so far
// then list their users with it, as ranks stored by id). It returns
// where to store the rank's ops, in program order, until commit.
func (p *goalParser) place(r, n int) []goalOp {
	g := p.g
	first := g.first[r]
	switch {
	case r == 0:
		g.lay = planLayout(g.Ranks, uint32(n))
	case g.lay.blocked(r) && uint32(n) != g.lay.n:
		p.flushStage()
		g.lay.unblock(r, &g.ops, g.first)
	}
	if p.recording {
		p.unitDeps = hugepage.Grow(p.unitDeps, len(p.edges)) // this rank's, doubling when short
		p.unitAt = append(p.unitAt, uint32(len(p.unitDeps)))
	}
	g.ops.extend(max(g.ops.len(), g.lay.extent(r, first, uint32(n))))
	if !g.lay.blocked(r) {
		if cap(p.rankOps) < n {
			p.rankOps = make([]goalOp, n)
		}
		p.rankOps = p.rankOps[:n]
		return p.rankOps
	}
	if p.stageRanks == 0 {
		p.stageFrom = r
		if size := stageGroup(&g.lay) * n; cap(p.stage) < size {
			p.stage = make([]goalOp, size)
		}
	}
	i := r - p.stageFrom
	return p.stage[i*n : (i+1)*n]
}

// stageGroup returns how many ranks of a block are staged together: a
// row of 16 ops of 16 bytes is 4 whole cache lines. Storing each rank's
// ops straight into its block's slots, a sixteenth of a line at a time,
// the 1,024-rank ring's whole run took 0.87-0.88 s; staged in groups of
// 4, 16, 64 and 256 ranks, 0.68-0.83, 0.65-0.69, 0.67-0.69 and 0.68-0.70
// s (3 alternated runs each, one core).
func stageGroup(l *opLayout) int { return min(16, 1<<l.shift) }

// commit copies rank r's ops, stored by place, into the table: at once
// when it is not in a block, else with its group once the group or the
// block is complete.
func (p *goalParser) commit(r int) {
	g := p.g
	if !g.lay.blocked(r) {
		for i, o := range p.rankOps {
			*g.op(g.first[r] + uint32(i)) = o
		}
		return
	}
	p.stageRanks++
	if p.stageRanks == stageGroup(&g.lay) || (r+1)&(1<<g.lay.shift-1) == 0 {
		p.flushStage()
	}
}

// flushStage copies the staged ranks into their block's slots, op row by
// op row: a row's ranks are side by side there.
func (p *goalParser) flushStage() {
	if p.stageRanks == 0 {
		return
	}
	g := p.g
	n := int(g.lay.n)
	base, stride := g.lay.rankSlots(p.stageFrom, g.first[p.stageFrom])
	// A group starts at a multiple of its size in its block, as does the
	// block's run of each op: a row of the group lies in one chunk.
	for k := range n {
		row := g.ops.run(base+uint32(k)*stride, uint32(p.stageRanks))
		for j := range row {
			row[j] = p.stage[j*n+k]
		}
	}
	p.stageRanks = 0
}

// storedOp returns op d of rank rr, stored already while a rank of rr's
// unit is being stored (recordRuns): in the table, or where place put it
// (a rank's ops, staged ranks and the rank being stored, stay there
// until commit and flushStage).
func (p *goalParser) storedOp(rr, d int) *goalOp {
	g := p.g
	switch current := len(g.first) - 1; {
	case !g.lay.blocked(rr) && rr == current:
		return &p.rankOps[d]
	case g.lay.blocked(rr) && rr >= p.stageFrom:
		return &p.stage[(rr-p.stageFrom)*int(g.lay.n)+d]
	}
	base, stride := g.lay.rankSlots(rr, g.first[rr])
	return g.op(base + uint32(d)*stride)
}

// sortAndStore stores rank r's ops (see finishRank) in any order of its
// edges, and returns the number of ops without dependencies.
func (p *goalParser) sortAndStore(r int, ops []parsedOp) (uint32, error) {
	g := p.g
	n := len(ops)
	first := g.first[r]
	// Each op's dependencies, After then StartAfter, each in the order
	// written: a counting sort of the edges by op and kind.
	end := resize(&p.count, 2*n+1)
	for _, e := range p.edges {
		end[2*e.op+b2i(e.start)+1]++
	}
	for k := 1; k < len(end); k++ {
		end[k] += end[k-1]
	}
	list := resize(&p.list, len(p.edges))
	forward := false
	for _, e := range p.edges {
		k := 2*e.op + b2i(e.start)
		list[end[k]] = e.dep
		end[k]++
		forward = forward || e.dep > e.op
	}
	// A dependency written twice is one dependency (counted twice, an op
	// would wait for a second completion that never comes), and "a
	// irequires b" adds nothing to "a requires b": drop repeats within each
	// key's edges, and an op's irequires of what it requires, compacting
	// the list. seen[d] is 1 + the last key that listed d.
	seen := resize(&p.seen, n)
	w, begin := int32(0), int32(0)
	for k := range 2 * n {
		for _, d := range list[begin:end[k]] {
			required := k%2 == 1 && seen[d] == int32(k) // by key k-1: the op's requires
			if seen[d] != int32(k)+1 && !required {
				seen[d] = int32(k) + 1
				list[w] = d
				w++
			}
		}
		begin, end[k] = end[k], w
	}
	// end[k] is now where key k's edges end, and end[k-1] where they begin.
	deps := func(i int32) (after, start []int32) {
		begin := int32(0)
		if i > 0 {
			begin = end[2*i-1]
		}
		return list[begin:end[2*i]], list[end[2*i]:end[2*i+1]]
	}
	order := resize(&p.order, n)
	if forward {
		if err := p.topoOrder(r, order, deps); err != nil {
			return 0, err
		}
	} else {
		for i := range order {
			order[i] = int32(i)
		}
	}
	newIndex := resize(&p.newIndex, n)
	for k, i := range order {
		newIndex[i] = int32(k)
	}
	dst := p.place(r, n)
	zero := uint32(0)
	for k, i := range order {
		after, start := deps(i)
		if len(after)+len(start) > math.MaxUint16 {
			return 0, &GOALError{File: p.file, Line: p.defined[i], Msg: "more than 65535 dependencies on one op"}
		}
		var o goalOp
		if p.recording {
			p.unitCounts = append(p.unitCounts, uint32(len(after))|uint32(len(start))<<16)
		}
		if err := p.pack(&o, &ops[i], first+uint32(k), p.defined[i]); err != nil {
			return 0, err
		}
		p.rankDeps += uint64(len(after) + len(start))
		for kind, list := range [2][]int32{after, start} {
			for _, d := range list {
				dk := newIndex[d]
				if p.recording {
					p.unitDeps = append(p.unitDeps, dk)
				}
				if !p.addUser(&dst[dk], first+uint32(dk), uint32(int32(k)-dk), kind == 1) {
					return 0, &GOALError{File: p.file, Line: p.defined[d], Msg: "more than 65535 ops depend on this one"}
				}
			}
		}
		if p.unitLists && !p.recording {
			p.recordDeps(r, k, n, after, start, newIndex)
		}
		if len(after)+len(start) == 0 {
			g.zeros.add(first + uint32(k))
			zero++
		}
		dst[k] = o
	}
	return zero, nil
}

// resize returns (*buf)[:n] zeroed, growing *buf if needed.
func resize(buf *[]int32, n int) []int32 {
	if cap(*buf) < n {
		*buf = make([]int32, n)
	}
	*buf = (*buf)[:n]
	clear(*buf)
	return *buf
}

func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// pack stores what was read of op (at position pos, rank by rank, written
// on line) in o.
func (p *goalParser) pack(o *goalOp, op *parsedOp, pos uint32, line int) error {
	g := p.g
	o.peer, o.tag = op.peer, op.tag
	switch {
	case op.kind == OpSend && op.value > g.maxSend:
		g.maxSend, g.maxSendLine = op.value, line
	case op.kind == OpCalc && op.value > g.maxCalc:
		g.maxCalc, g.maxCalcLine = op.value, line
	}
	o.val = uint32(op.kind)<<valKindShift | valRun // no users yet: a run of none
	if op.value <= valMask {
		o.val |= uint32(op.value)
	} else {
		if len(g.big) >= maxBig {
			return &GOALError{File: p.file, Line: line, Msg: fmt.Sprintf("more than %d sizes or durations of %d or more", maxBig, valMask+1)}
		}
		o.val |= valBig | uint32(len(g.big))
		g.big = append(g.big, op.value)
	}
	if g.place == nil && (op.cpu != 0 || op.nic != 0) {
		g.place = make([]uint32, pos, max(pos, 1024))
	}
	if g.place != nil {
		for uint32(len(g.place)) < pos {
			g.place = append(g.place, 0)
		}
		g.place = append(g.place, uint32(op.cpu)<<16|uint32(op.nic))
	}
	return nil
}

// layout turns the tables a run reads by op from ids to slots (the same
// when no rank is in a block), once every rank is read.
func (g *GOAL) layout() {
	if g.lay.cutID == 0 {
		return
	}
	for i := range g.zeros.len() {
		z := g.zeros.at(i)
		*z = g.lay.slot(*z)
	}
	if g.place != nil {
		place := make([]uint32, len(g.place))
		for id, p := range g.place {
			place[g.lay.slot(uint32(id))] = p
		}
		g.place = place
	}
}

// fillUsers lists the users of the ops of the ranks stored since the last
// call, up to rank end-1: a whole block of ranks, or ranks stored by id
// (the rank just read, and when it ended the blocks, those of its block
// read before it). Their dependencies are in unitDeps, which it empties.
//
// Each op's users list ends where the next op's begins, in the order the
// ops are stored (opLayout), so that ops read together have their lists
// together: the units come in that order, and lists are placed slot by
// slot, user pointing past each list's end and moving back as the list is
// filled from its end (the StartAfter users first, so that they come
// last). The fill walks the unit's ops backwards in the order they are
// stored, so that each list comes out in program order: a rank's ops are
// stored in program order, and an op's users are of its own rank. In a
// block, it walks op row by op row, the ranks of the row side by side,
// each rank's dependencies read from where its later ops' began.
//
// Listing users as the text is read, from dependencies a block at a time,
// spares the whole schedule's dependency lists: the 1,048,576-rank
// dissemination barrier's 328 MB, touched once and read once more.
func (p *goalParser) fillUsers(end int) error {
	g := p.g
	lo, hi := g.first[p.unitRank], g.first[end] // a block's slots are its ids
	// Each entry of users is a dependency or one of the two words before
	// the list of an op whose users are not a run: checked here against
	// maxUsers.
	if p.unitLists {
		total := uint64(len(g.users))
		for slot := lo; slot < hi; slot++ {
			o := g.op(slot)
			if o.val&valRun != 0 {
				continue
			}
			// How many users require the op, where its list ends, then
			// room for the list: user is where the room ends, and
			// fillUsersOf lists them back to where it begins.
			c := o.user
			at := total
			total += 2 + uint64(c&math.MaxUint16+c>>16)
			if total > maxUsers {
				return &GOALError{File: p.file, Line: p.line, Msg: fmt.Sprintf("more than %d entries in the users lists (dependencies, and two for each op with users not in a run)", maxUsers)}
			}
			o.user = uint32(total)
			p.headers = append(p.headers, [3]uint32{uint32(at), c & math.MaxUint16, o.user})
		}
		g.growUsers(int(total))
		for _, h := range p.headers {
			g.users[h[0]], g.users[h[0]+1] = h[1], h[2]
		}
		p.headers = p.headers[:0]
		p.unitAt = append(p.unitAt, uint32(len(p.unitDeps))) // where the last rank's dependencies end
		if p.unitStarts {
			p.fillUnit(end, true)
		}
		p.fillUnit(end, false)
	}
	g.hasStarts = g.hasStarts || p.unitStarts
	p.unitRank, p.unitDeps, p.unitAt, p.unitCounts = end, p.unitDeps[:0], p.unitAt[:0], p.unitCounts[:0]
	p.unitStarts, p.unitLists, p.recording = false, false, false
	return nil
}

// recordDeps starts recording the unit's dependencies, once the op at
// position k of rank r (of n ops) made some op's users not a run: it
// records those of the ops stored before it, from their users (a run
// each, or, for an op that stopped being one while op k was stored, the
// run it was), then op k's, after and start (stored positions, or
// written positions when newIndex maps them). Recording only from then
// spares a unit whose users are all runs its scratch, written and read by
// nothing: the ring at 1,024 ranks, blocks of 256 ranks of 4,092 ops and
// 8,184 dependencies each, 12.6 MB a block, peaked 11-12 MB lower.
func (p *goalParser) recordDeps(r, k, n int, after, start, newIndex []int32) {
	g := p.g
	p.recording = true
	// Room for the whole unit at once, as if its ranks were all like this
	// one: grown by append, the first block's scratch (the ring at 1,024
	// ranks: 9 MB) allocated 55 MB on the way, each move into fresh
	// memory, and its page faults took 13% of the run. Its dependencies
	// at most unitDepsPerOp an op, so that a rank of many dependencies
	// (or one written many times) followed by light ranks makes room for
	// what the text holds, not 256 times that.
	ranks := 1
	if g.lay.blocked(r) {
		ranks <<= g.lay.shift
	}
	p.unitCounts = hugepage.Grow(p.unitCounts, ranks*n)
	p.unitDeps = hugepage.Grow(p.unitDeps, min(ranks*len(p.edges), ranks*n*unitDepsPerOp))
	for rr := p.unitRank; rr <= r; rr++ {
		ops := k // rank r's stored before op k
		if rr < r {
			ops = int(g.first[rr+1] - g.first[rr])
		}
		p.unitAt = append(p.unitAt, uint32(len(p.unitDeps)))
		p.recordRuns(rr, ops)
	}
	p.unitDeps = hugepage.Grow(p.unitDeps, len(p.edges)) // the rest of rank r's
	p.unitCounts = append(p.unitCounts, uint32(len(after))|uint32(len(start))<<16)
	for _, list := range [2][]int32{after, start} {
		for _, d := range list {
			if newIndex != nil {
				d = newIndex[d]
			}
			p.unitDeps = append(p.unitDeps, d)
		}
	}
	p.wasRun = p.wasRun[:0]
}

// recordRuns records (as recordDeps) the dependencies of the first n ops
// of rank rr, whose users are each a run (or were, in wasRun): a counting
// sort of the runs' users by op and kind, for each op its After then its
// StartAfter dependencies. Users at n or later are not recorded.
func (p *goalParser) recordRuns(rr, n int) {
	g := p.g
	first := g.first[rr]
	words := resize(&p.runWords, n) // each op's users as a run
	for d := range words {
		words[d] = int32(p.storedOp(rr, d).user)
	}
	for _, w := range p.wasRun {
		if d := w[0] - first; w[0] >= first && d < uint32(n) {
			words[d] = int32(w[1])
		}
	}
	// users returns op d's users' positions: from, and how many; start
	// when its one user irequires it.
	users := func(d int) (from, count uint32, start bool) {
		word := uint32(words[d])
		from, count = uint32(d)+word&runNextMask, word>>runShift
		if count == runStart {
			return from, 1, true
		}
		return from, count, false
	}
	end := resize(&p.runDeps, 2*n+1) // by op and kind (2*op + start), then where each ends
	for d := range n {
		from, count, start := users(d)
		for u := from; u < from+count && u < uint32(n); u++ {
			end[2*u+uint32(b2i(start))+1]++
		}
	}
	for key := 1; key < len(end); key++ {
		end[key] += end[key-1]
	}
	at := len(p.unitDeps)
	p.unitDeps = hugepage.Grow(p.unitDeps, int(end[2*n]))[:at+int(end[2*n])]
	for d := range n {
		from, count, start := users(d)
		for u := from; u < from+count && u < uint32(n); u++ {
			key := 2*u + uint32(b2i(start))
			p.unitDeps[at+int(end[key])] = int32(d)
			end[key]++
		}
	}
	// end[key] is now where key's dependencies end, and end[key-1] where
	// they begin.
	begin := int32(0)
	for u := range n {
		p.unitCounts = append(p.unitCounts, uint32(end[2*u]-begin)|uint32(end[2*u+1]-end[2*u])<<16)
		begin = end[2*u+1]
	}
}

// fillUnit lists the ops of ranks unitRank .. end-1 as users of their
// dependencies (of their StartAfter lists when starts, else of their After
// lists); see fillUsers.
func (p *goalParser) fillUnit(end int, starts bool) {
	g := p.g
	deps, at, counts := p.unitDeps, p.unitAt, p.unitCounts
	unit := g.first[p.unitRank] // the unit's first id
	if !g.lay.blocked(p.unitRank) {
		for r := end - 1; r >= p.unitRank; r-- {
			first, n := g.first[r], g.first[r+1]-g.first[r]
			e := at[r-p.unitRank+1]
			for k := n; k > 0; k-- {
				id := first + k - 1
				e = g.fillUsersOf(id, e, first, 1, starts, deps, counts[id-unit])
			}
		}
		return
	}
	ranks := uint32(end - p.unitRank) // a block's
	ends := slices.Grow(p.ends[:0], int(ranks))[:ranks]
	p.ends = ends
	copy(ends, at[1:])
	// unit is also the block's first slot; its rank k's op i has id
	// unit + k*n + i.
	n := g.lay.n
	for i := int(n) - 1; i >= 0; i-- {
		row := unit + uint32(i)*ranks // op i of the block's ranks
		for k := int(ranks) - 1; k >= 0; k-- {
			ends[k] = g.fillUsersOf(row+uint32(k), ends[k], unit+uint32(k), ranks, starts, deps, counts[uint32(k)*n+uint32(i)])
		}
	}
}

// growUsers makes users n long, the new entries to be filled. Once large,
// users moves to room reserved for the most a schedule may have, so that
// it never moves again: growing it by copies touched it up to twice over.
func (g *GOAL) growUsers(n int) {
	if n > cap(g.users) && n >= usersRoomFrom && g.usersRoom == nil {
		g.usersRoom = hugepage.NewArena()
		if room := hugepage.Reserve[uint32](g.usersRoom, usersRoom); room != nil {
			g.users = append(room, g.users...)
		}
	}
	if n > cap(g.users) {
		g.users = hugepage.Grow(g.users, n-len(g.users))
	}
	g.users = g.users[:n]
}

// usersRoomFrom is the length from which users moves to reserved room
// (a variable for tests), and usersRoom the room: o.user is a uint32.
var usersRoomFrom = 1 << 20

const usersRoom = min(math.MaxUint32, math.MaxInt)

// maxUsers is the most entries users may have: its room (tests lower it).
var maxUsers uint64 = usersRoom

// fillUsersOf lists the op in slot u as a user of its dependencies (see
// fillUsers), whose list ends at end in deps, with counts their number
// (After | StartAfter<<16); its rank's op i is in slot base + i*stride.
// It returns where the list begins.
func (g *GOAL) fillUsersOf(u, end, base, stride uint32, starts bool, deps []int32, counts uint32) uint32 {
	na, ns := counts&math.MaxUint16, counts>>16
	begin := end - na - ns
	lo, hi := begin, begin+na
	if starts {
		lo, hi = begin+na, end
	}
	for _, dep := range slices.Backward(deps[lo:hi]) {
		d := g.op(base + uint32(dep)*stride)
		if d.val&valRun != 0 {
			continue
		}
		d.user--
		g.users[d.user] = u
	}
	return begin
}

// topoOrder is Kahn's algorithm taking the lowest written index first; a
// cycle is reported with the lines of the ops on it.
func (p *goalParser) topoOrder(r int, order []int32, deps func(int32) ([]int32, []int32)) error {
	n := len(order)
	indeg := make([]int, n)
	users := make([][]int32, n)
	for i := range n {
		after, start := deps(int32(i))
		for _, d := range append(append([]int32(nil), after...), start...) {
			indeg[i]++
			users[d] = append(users[d], int32(i))
		}
	}
	h := &minHeap{}
	for i := range n {
		if indeg[i] == 0 {
			h.push(int32(i))
		}
	}
	order = order[:0]
	for h.len() > 0 {
		i := h.pop()
		order = append(order, i)
		for _, u := range users[i] {
			if indeg[u]--; indeg[u] == 0 {
				h.push(u)
			}
		}
	}
	if len(order) == n {
		return nil
	}
	var lines []string
	for i := range n {
		if indeg[i] > 0 && len(lines) < 8 {
			lines = append(lines, strconv.Itoa(p.defined[i]))
		}
	}
	return &GOALError{File: p.file, Line: p.defined[firstWaiting(indeg)], Msg: fmt.Sprintf("rank %d's dependencies form a cycle (ops defined on lines %s)", r, joinComma(lines))}
}

func firstWaiting(indeg []int) int {
	for i, d := range indeg {
		if d > 0 {
			return i
		}
	}
	return 0
}

func joinComma(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(x)
	}
	return b.String()
}

// minHeap of int32 for the stable topological sort.
type minHeap struct{ a []int32 }

func (h *minHeap) len() int { return len(h.a) }
func (h *minHeap) push(v int32) {
	h.a = append(h.a, v)
	for i := len(h.a) - 1; i > 0; {
		p := (i - 1) / 2
		if h.a[p] <= h.a[i] {
			break
		}
		h.a[p], h.a[i] = h.a[i], h.a[p]
		i = p
	}
}
func (h *minHeap) pop() int32 {
	top := h.a[0]
	last := len(h.a) - 1
	h.a[0] = h.a[last]
	h.a = h.a[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h.a) && h.a[l] < h.a[m] {
			m = l
		}
		if r < len(h.a) && h.a[r] < h.a[m] {
			m = r
		}
		if m == i {
			break
		}
		h.a[m], h.a[i] = h.a[i], h.a[m]
		i = m
	}
	return top
}
