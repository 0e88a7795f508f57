package sim

import (
	"testing"

	"pgregory.net/rapid"
)

// A send queue's replies on the way (replying less replied) answer
// waitsForReply as a plain list scanned whole does, whatever the order in
// which sends are matched and their replies come back, and across the
// wrap of the send numbers at 2^32.
func TestWaitsForReplyMatchesAScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var tq txQueue
		start := rapid.Uint32().Draw(t, "first send number")
		issued := start
		var onWay []uint32 // the plain list
		for range rapid.IntRange(1, 200).Draw(t, "steps") {
			switch rapid.IntRange(0, 2).Draw(t, "what") {
			case 0: // a send is matched: its reply is on the way
				s := issued
				issued++
				onWay = append(onWay, s)
				tq.replying.push(s)
			case 1: // a reply comes back
				if len(onWay) == 0 {
					continue
				}
				i := rapid.IntRange(0, len(onWay)-1).Draw(t, "which reply")
				tq.replyBack(onWay[i])
				onWay = append(onWay[:i], onWay[i+1:]...)
			case 2: // data asks whether it waits
				seq := start + rapid.Uint32Range(0, issued-start+1).Draw(t, "data's number")
				want := false
				for _, s := range onWay {
					want = want || int32(s-seq) < 0
				}
				if got := tq.waitsForReply(seq); got != want {
					t.Fatalf("send %d waits %v with replies on the way for %v; want %v", seq, got, onWay, want)
				}
			}
		}
	})
}
