package realrun_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/collsim/collsim/collectives"
	"github.com/collsim/collsim/sim/realrun"
)

func newSecret(t *testing.T) realrun.Secret {
	t.Helper()
	s, err := realrun.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// stranger connects to addr and, once connected (and, if greeted, once it
// has read the other side's first line), sends what in the background; the
// channel gives everything it was sent after that first line, until the
// other side closed the connection or wait passed.
func stranger(t *testing.T, addr string, greeted bool, what []byte, wait time.Duration) <-chan string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(wait))
	rd := bufio.NewReader(c)
	if greeted {
		if _, err := rd.ReadString('\n'); err != nil {
			t.Fatalf("a stranger was not challenged: %v", err)
		}
	}
	heard := make(chan string, 1)
	go func() {
		defer c.Close()
		if len(what) > 0 {
			c.Write(what)
		}
		b, _ := io.ReadAll(rd)
		heard <- string(b)
	}()
	return heard
}

// TestParseSecret: a secret is hexadecimal, of at least 128 bits, and
// String gives it back.
func TestParseSecret(t *testing.T) {
	s := newSecret(t)
	if len(s) != 16 {
		t.Fatalf("a new secret has %d bytes, want 16", len(s))
	}
	if got, err := realrun.ParseSecret(" "+s.String()+"\n", "x"); err != nil || string(got) != string(s) {
		t.Errorf("ParseSecret(String()) = %x, %v; want %x", got, err, s)
	}
	for _, bad := range []string{"", "00112233445566778899aabbccddee", "hunter2hunter2hunter2hunter2hunt", "0011223344556677889 9aabbccddeeff"} {
		if _, err := realrun.ParseSecret(bad, "$COLLSIM_SECRET"); err == nil || !strings.Contains(err.Error(), "$COLLSIM_SECRET") {
			t.Errorf("ParseSecret(%q) = %v, want an error naming the variable", bad, err)
		}
	}
}

// allreduceJob is a small checked job for rank of size ranks.
func allreduceJob(t *testing.T, size, rank int) realrun.Job {
	t.Helper()
	a, err := collectives.Lookup(collectives.Allreduce, "ring")
	if err != nil {
		t.Fatal(err)
	}
	p := collectives.Params{Ranks: size, Count: 100}
	s, err := a.Build(p)
	if err != nil {
		t.Fatal(err)
	}
	return realrun.Job{Name: a.ID(), Bytes: 800, Schedule: s,
		Data:   func() ([][]uint64, error) { return a.RankData(p, 1, rank) },
		Verify: func(b [][]uint64) error { return a.VerifyRank(p, 1, rank, b) }}
}

// TestStrangersAtTheRendezvous: connections that do not prove they know
// the job's secret (one that says nothing, garbage without end of line, a
// registration with a forged proof, a collsim rank given another secret),
// and a rank of another job that does, reach the rendezvous before the
// ranks do. None of them learns a rank's
// address, none holds up or fails the run, and the run completes on the
// real ranks' results.
func TestStrangersAtTheRendezvous(t *testing.T) {
	const size = 3
	secret := newSecret(t)
	ln := listen(t)
	addr := ln.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	type served struct {
		reports []realrun.Report
		err     error
	}
	done := make(chan served, 1)
	go func() {
		r, err := realrun.Serve(ctx, ln, size, 30*time.Second, secret, 1)
		done <- served{r, err}
	}()

	heard := []<-chan string{
		// Says nothing: it must not hold up the registration of the others.
		stranger(t, addr, true, nil, 20*time.Second),
		// Sends a megabyte with no end of line: the store must not buffer it.
		stranger(t, addr, true, []byte(strings.Repeat("x", 1<<20)), 20*time.Second),
		// A registration in the right form for rank 1, with a forged proof.
		stranger(t, addr, true, append(forged(size), '\n'), 20*time.Second),
	}
	// A rank 1 of another job with the same secret (the same user's other
	// run): refused and told so, and the run goes on.
	_, _, err := realrun.Join(ctx, addr, 1, size, 2, secret, "127.0.0.1:9", "other-job", nil)
	if err == nil || !strings.Contains(err.Error(), "runs another job than the rendezvous's") {
		t.Errorf("a rank of another job joined, or was not told why not: %v", err)
	}
	// A collsim rank 1 with another secret: refused, and told so.
	_, _, err = realrun.Join(ctx, addr, 1, size, 1, newSecret(t), "127.0.0.1:9", "other", nil)
	if err == nil || !strings.Contains(err.Error(), "did not prove it knows the job's secret") {
		t.Errorf("a rank with another secret joined, or was not told why not: %v", err)
	}

	start := time.Now()
	errs := make([]error, size)
	var ranks sync.WaitGroup
	for r := range size {
		ranks.Go(func() {
			errs[r] = realrun.RunRank(ctx, realrun.RankOptions{Rank: r, Size: size, Rendezvous: addr, Bind: "127.0.0.1", Job: 1, Secret: secret,
				Jobs: []realrun.Job{allreduceJob(t, size, r)}, Iterations: 2, Timeout: 20 * time.Second})
		})
	}
	ranks.Wait()
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
	s := <-done
	if s.err != nil {
		t.Fatalf("the rendezvous failed: %v", s.err)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("the run took %v: strangers held it up", d)
	}
	for r, rep := range s.reports {
		if rep.Rank != r || len(rep.Results) != 1 || !rep.Results[0].Verified {
			t.Errorf("rank %d's report: %+v", r, rep)
		}
	}
	for i, h := range heard {
		if h := <-h; strings.Contains(h, "peers") || strings.Contains(h, "127.0.0.1") {
			t.Errorf("stranger %d learnt the ranks' addresses: %q", i, h)
		}
	}
}

// forged is a registration in the right form for rank 1 of size, with a
// forged proof.
func forged(size int) []byte {
	b, _ := json.Marshal(map[string]any{"rank": 1, "size": size, "job": "0000000000000001", "addr": "127.0.0.1:9", "host": "evil",
		"nonce": make([]byte, 16), "proof": make([]byte, 32)})
	return b
}

// helloFor is a mesh hello in the wire's form (wire.go) for rank of size,
// with a zero nonce: what a stranger who read the source can send.
func helloFor(job uint64, rank, size uint32) []byte {
	b := make([]byte, 40)
	le := binary.LittleEndian
	le.PutUint32(b[0:], 0x48525343)
	le.PutUint32(b[4:], 6) // the protocol
	le.PutUint64(b[8:], job)
	le.PutUint32(b[16:], rank)
	le.PutUint32(b[20:], size)
	return b
}

// TestStrangersAtTheMesh: while rank 0 waits for its peers, strangers
// connect to its listener: one says nothing, one sends garbage, one sends a
// correct hello for rank 1, reads rank 0's answer and sends a forged proof.
// The forger is dropped at once, and the real ranks then connect and run;
// no stranger is ever sent a frame.
func TestStrangersAtTheMesh(t *testing.T) {
	const size, job = 3, 7
	secret := newSecret(t)
	lns := make([]net.Listener, size)
	addrs := make([]string, size)
	for r := range lns {
		lns[r] = listen(t)
		addrs[r] = lns[r].Addr().String()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	meshes := make([]*realrun.Mesh, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	connect := func(r int) {
		wg.Go(func() {
			meshes[r], errs[r] = realrun.Connect(ctx, r, size, job, secret, lns[r], addrs, realrun.SharedMemory)
		})
	}
	connect(0)
	heard := []<-chan string{
		stranger(t, addrs[0], false, nil, 15*time.Second),
		stranger(t, addrs[0], false, []byte(strings.Repeat("garbage!", 100)), 15*time.Second),
	}
	if answered, after := forge(t, addrs[0], helloFor(job, 1, size)); !answered || after != "" {
		t.Errorf("the forger was answered: %t, then sent %q; want answered, then dropped without a word", answered, after)
	}
	start := time.Now()
	connect(1)
	connect(2)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("connecting took %v: strangers held it up", d)
	}
	for r, m := range meshes {
		wg.Go(func() {
			rank := realrun.NewRank(m)
			rank.Timeout = 10 * time.Second
			job := allreduceJob(t, size, r)
			data, err := job.Data()
			if err == nil {
				err = rank.Execute(job.Schedule, data)
			}
			if err == nil {
				err = job.Verify(data)
			}
			if err == nil {
				err = m.Close(time.Now().Add(10 * time.Second))
			} else {
				m.Abort(err)
			}
			errs[r] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i, h := range heard {
		if h := <-h; h != "" {
			t.Errorf("stranger %d was sent %q", i, h)
		}
	}
}

// forge connects to a rank's listener, sends hello, reads the rank's hello
// and proof (answered), answers with a forged proof, and returns what it is
// sent after that until the rank closes the connection.
func forge(t *testing.T, addr string, hello []byte) (answered bool, after string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(15 * time.Second))
	c.Write(hello)
	answer := make([]byte, 40+32)
	if _, err := io.ReadFull(c, answer); err != nil {
		return false, ""
	}
	c.Write(make([]byte, 32))
	rest, err := io.ReadAll(c)
	if err != nil {
		t.Errorf("the forger's connection was not closed: %v", err)
	}
	return true, string(rest)
}

// TestMeshWithAnotherSecret: a rank given another secret cannot connect;
// the rank it dials says the other side did not prove itself, and the rank
// that waits for it counts the dropped connection.
func TestMeshWithAnotherSecret(t *testing.T) {
	lns := []net.Listener{listen(t), listen(t)}
	addrs := []string{lns[0].Addr().String(), lns[1].Addr().String()}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	secrets := []realrun.Secret{newSecret(t), newSecret(t)}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Go(func() {
			m, err := realrun.Connect(ctx, r, 2, 1, secrets[r], lns[r], addrs, realrun.SharedMemory)
			if m != nil {
				m.Abort(nil)
			}
			errs[r] = err
		})
	}
	wg.Wait()
	for r, want := range []string{"1 connection(s) that did not prove they know the job's secret were dropped", "rank 1: the process at " + addrs[0] + ", rank 0's address, did not prove it knows the job's secret"} {
		if errs[r] == nil || !strings.Contains(errs[r].Error(), want) {
			t.Errorf("rank %d: %v; want it to say %q", r, errs[r], want)
		}
	}
}
