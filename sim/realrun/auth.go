package realrun

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

// Authentication. Every connection of a real run, to the rendezvous and
// between ranks, starts with a challenge and response keyed by the job's
// secret: each side sends a fresh random nonce, and proves it knows the
// secret with an HMAC-SHA256 of both nonces and of what it announced. The
// secret itself never crosses the wire, and a proof recorded from one
// connection is worthless on another. A connection that does not prove
// itself is closed without a word to the run: a port scan, a stranger or a
// rank of another job cannot fail it, nor learn the ranks' addresses.
//
// What follows the handshake (reports, data frames) is neither encrypted
// nor authenticated frame by frame: whoever can rewrite packets on the path
// can still change them, as with MPI over TCP.

// SecretBytes is the length of a secret NewSecret makes, and the least a
// user-given one may have: 128 bits.
const SecretBytes = 16

// Secret is the key every rank of one job shares.
type Secret []byte

// NewSecret returns a random secret of SecretBytes bytes.
func NewSecret() (Secret, error) {
	s := make(Secret, SecretBytes)
	if _, err := rand.Read(s); err != nil {
		return nil, fmt.Errorf("making the job's secret: %w", err)
	}
	return s, nil
}

// ParseSecret reads a secret written as hexadecimal digits (at least
// 2*SecretBytes of them), as String writes it. what names where it came
// from, for the error.
func ParseSecret(text, what string) (Secret, error) {
	text = strings.TrimSpace(text)
	b, err := hex.DecodeString(text)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s is not a secret in hexadecimal digits (%v): make one with `od -An -N16 -tx1 /dev/urandom | tr -d ' \\n'`", what, err)
	case len(b) < SecretBytes:
		return nil, fmt.Errorf("%s has %d bits; a secret needs at least %d (%d hexadecimal digits): make one with `od -An -N16 -tx1 /dev/urandom | tr -d ' \\n'`", what, 8*len(b), 8*SecretBytes, 2*SecretBytes)
	}
	return b, nil
}

// String writes the secret in hexadecimal digits, as ParseSecret reads it.
func (s Secret) String() string { return hex.EncodeToString(s) }

// proof is the HMAC of parts under the secret, for the role label (each
// side of each handshake has its own, so that no proof can be reflected
// back as another's). Parts are length-prefixed: no two lists of parts
// give the same input.
func (s Secret) proof(label string, parts ...[]byte) []byte {
	h := hmac.New(sha256.New, s)
	var n [8]byte
	for _, p := range append([][]byte{[]byte(label)}, parts...) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return h.Sum(nil)
}

// sameProof reports whether got is the proof want, in constant time.
func sameProof(got, want []byte) bool { return len(want) > 0 && hmac.Equal(got, want) }

// errNoSecret is the error of a run started without a secret.
var errNoSecret = errors.New("no secret: every rank of a real run needs the job's secret")

// nonceBytes is the length of each side's challenge.
const nonceBytes = 16

func newNonce() ([]byte, error) {
	b := make([]byte, nonceBytes)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("making a challenge: %w", err)
	}
	return b, nil
}

// handshakeTimeout bounds one connection's handshake: a genuine peer
// answers at once, and a connection that says nothing must not hold a
// slot long.
const handshakeTimeout = 10 * time.Second

// acceptRetry accepts the next connection on ln. A listener that fails
// for a while (out of file descriptors under a flood of connections) is
// retried with a growing pause, so that strangers cannot deafen it for
// good; it returns an error only once stop says to stop (the listener
// closed, or the caller done with it).
func acceptRetry(ln net.Listener, stop func() bool) (net.Conn, error) {
	pause := 5 * time.Millisecond
	for {
		c, err := ln.Accept()
		if err == nil || stop() || errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) {
			return c, err
		}
		time.Sleep(pause)
		pause = min(2*pause, time.Second)
	}
}

// deadliner is a listener whose Accept a deadline interrupts: Serve and
// Connect stop accepting by setting one (TCP and Unix listeners are).
type deadliner interface{ SetDeadline(time.Time) error }

// listenerError refuses a listener Serve and Connect cannot stop.
func listenerError(ln net.Listener) error {
	if _, ok := ln.(deadliner); !ok {
		return fmt.Errorf("listener %T cannot take a deadline: give a TCP listener", ln)
	}
	return nil
}

// stopAccepting interrupts ln's Accept, now and from now on.
func stopAccepting(ln net.Listener) { ln.(deadliner).SetDeadline(time.Now()) }

// refusals counts the connections a listener dropped for not proving
// themselves, and remembers a few of their addresses for the error of a
// run whose ranks never arrived (a rank given another secret shows here).
type refusals struct {
	n     int
	addrs []string
}

func (r *refusals) add(addr string) {
	r.n++
	if len(r.addrs) < 3 {
		r.addrs = append(r.addrs, addr)
	}
}

// String says what was refused, or "" if nothing was.
func (r *refusals) String() string {
	if r.n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d connection(s) that did not prove they know the job's secret were dropped (from %s): do all ranks have the same secret?", r.n, strings.Join(r.addrs, ", "))
}
