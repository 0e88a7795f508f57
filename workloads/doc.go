// Package workloads holds what the applications built from collectives
// share: a Script that writes a rank's items phase by phase, as the rank
// advances. The applications are its subpackages (dnn: training and
// inference of neural networks; fft: 3D FFT). They turn an application
// into per-rank programs through collectives' composition API (compute,
// point-to-point messages, collective calls on groups) and never see the
// network model.
package workloads

import "github.com/collsim/collsim/collectives"

// Writer appends a rank's items and numbers them (the indices After
// names).
type Writer struct {
	items []collectives.Item
	next  int32
}

// Add appends it and returns its index in the rank's script.
func (w *Writer) Add(it collectives.Item) int32 {
	w.items = append(w.items, it)
	w.next++
	return w.next - 1
}

// Next is the index the next item added will have.
func (w *Writer) Next() int32 { return w.next }

// Phased is a Script written one phase at a time: Fill adds the next
// phase's items to the writer and reports whether there was one. Items
// exist only from the phase being read, so a long program costs memory
// per phase, not per program.
type Phased struct {
	W    Writer
	Fill func(w *Writer) bool
	// Error, once set by Fill, ends the script: the run stops with it.
	Error error
	done  bool
}

// Err reports the error that ended the script (see collectives.Script).
func (p *Phased) Err() error { return p.Error }

// Next implements collectives.Script.
func (p *Phased) Next(out []collectives.Item) []collectives.Item {
	for !p.done && len(p.W.items) == 0 {
		if !p.Fill(&p.W) || p.Error != nil {
			p.done = true
		}
	}
	if p.Error != nil {
		return out
	}
	out = append(out, p.W.items...)
	p.W.items = p.W.items[:0]
	return out
}
