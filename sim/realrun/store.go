package realrun

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// The rendezvous: a small TCP store (run by the launcher, or by rank 0
// under srun or mpirun) where every rank registers the address its peers
// can reach it at, receives everyone's, and at the end hands in its
// results. It also supervises: when a rank reports a failure or its
// connection drops before it reported, the store tells every other rank to
// abort, so that no rank waits for a dead peer until its timeout.
//
// The protocol is one JSON object per line.

// challenge is the store's first line on every connection.
type challenge struct {
	Nonce []byte `json:"challenge"`
}

// registration is a rank's first line to the store, with its proof that
// it knows the job's secret (see auth.go).
type registration struct {
	Rank  int    `json:"rank"`
	Size  int    `json:"size"`
	Job   string `json:"job"`
	Addr  string `json:"addr"`
	Host  string `json:"host"`
	Nonce []byte `json:"nonce"`
	Proof []byte `json:"proof"`
}

// proofOf is what a registration proves, given the store's nonce.
func (r *registration) proofOf(s Secret, storeNonce []byte) []byte {
	return s.proof("collsim rendezvous: rank", storeNonce, r.Nonce,
		fmt.Appendf(nil, "%d|%d|%s|%s|%s", r.Rank, r.Size, r.Job, r.Addr, r.Host))
}

// storeReply is every line the store sends after the challenge. The line
// with the peers' addresses carries the store's own proof.
type storeReply struct {
	Peers []string `json:"peers,omitempty"`
	Proof []byte   `json:"proof,omitempty"`
	Error string   `json:"error,omitempty"`
	Abort string   `json:"abort,omitempty"`
	Done  bool     `json:"done,omitempty"`
}

// peersProof is the store's proof of the peers' addresses to one rank.
func peersProof(s Secret, storeNonce, rankNonce []byte, peers []string) []byte {
	return s.proof("collsim rendezvous: store", storeNonce, rankNonce, []byte(strings.Join(peers, "\n")))
}

// handIn is a rank's last line: its report or its failure.
type handIn struct {
	Report *Report `json:"report,omitempty"`
	Error  string  `json:"error,omitempty"`
	// Secondary marks a failure that follows from another rank's (a lost
	// connection): the rendezvous waits a moment for the cause.
	Secondary bool `json:"secondary,omitempty"`
}

// Report is what one rank measured.
type Report struct {
	Rank int    `json:"rank"`
	Host string `json:"host"`
	// SharedPeers is how many peers the rank reached through shared
	// memory; the others, over TCP.
	SharedPeers int `json:"shared_peers"`
	// SingleCopyPeers is how many of them it would copy large messages
	// straight out of (Mesh.SingleCopyPeers), and SingleCopies how many
	// messages it did.
	SingleCopyPeers int   `json:"single_copy_peers"`
	SingleCopies    int64 `json:"single_copies"`
	// Oversubscribed says the rank's machine had more of the run's ranks
	// than the cores they may run on (Mesh.Oversubscribed).
	Oversubscribed bool `json:"oversubscribed"`
	// SingleCopyProbe is what the rank measured before its jobs under
	// SingleCopyAuto, if it probed.
	SingleCopyProbe *Probe `json:"single_copy_probe,omitempty"`
	// CPUs are the CPUs the rank may run on, as a list ("0", "0-3,8").
	CPUs    string   `json:"cpus"`
	Results []Result `json:"results"`
}

// Timing is what OSU reports of one call: average, least and greatest
// times over the timed iterations.
type Timing struct {
	Name       string        `json:"name"`
	Bytes      int64         `json:"bytes"`
	Iterations int           `json:"iterations"`
	Avg        time.Duration `json:"avg_ns"`
	Min        time.Duration `json:"min_ns"`
	Max        time.Duration `json:"max_ns"`
	Verified   bool          `json:"verified"` // every iteration's data was checked
}

// Result is one rank's timing of one call.
type Result struct {
	Timing
	// Times are the timed iterations one by one.
	Times []time.Duration `json:"times_ns"`
	// Timeline is the ops of the last iteration, if asked for.
	Timeline []Span `json:"timeline,omitempty"`
}

// client is a registered rank's connection to the store.
type client struct {
	conn  net.Conn
	rd    *bufio.Reader
	reg   registration
	nonce []byte // the store's challenge to it
}

func (c *client) send(r storeReply) {
	b, _ := json.Marshal(r)
	c.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	c.conn.Write(append(b, '\n'))
}

// greeting is the outcome of one connection's handshake: a rank that proved
// itself, or the address of one that did not (nothing at all for a
// listener's failure).
type greeting struct {
	client  *client
	refused string
}

// maxRegistration bounds a registration line: a stranger cannot make the
// store buffer without limit.
const maxRegistration = 16 << 10

// greetRank challenges a new connection and reads its registration. A
// connection that does not prove it knows secret is told so and closed.
func greetRank(conn net.Conn, secret Secret) greeting {
	nonce, err := newNonce()
	if err != nil {
		conn.Close()
		return greeting{refused: conn.RemoteAddr().String()}
	}
	c := &client{conn: conn, rd: bufio.NewReaderSize(conn, maxRegistration), nonce: nonce}
	conn.SetDeadline(time.Now().Add(handshakeTimeout))
	b, _ := json.Marshal(challenge{Nonce: nonce})
	_, err = conn.Write(append(b, '\n'))
	var line []byte
	if err == nil {
		line, err = c.rd.ReadSlice('\n')
	}
	conn.SetDeadline(time.Time{})
	if err != nil || json.Unmarshal(line, &c.reg) != nil || len(c.reg.Nonce) != nonceBytes || !sameProof(c.reg.Proof, c.reg.proofOf(secret, nonce)) {
		if err == nil {
			c.send(storeReply{Error: "this rank did not prove it knows the job's secret: give every rank the same one"})
		}
		conn.Close()
		return greeting{refused: conn.RemoteAddr().String()}
	}
	return greeting{client: c}
}

// Serve runs the rendezvous for size ranks on ln until every rank has
// handed in its report, and returns the reports by rank. register bounds
// how long ranks may take to register; once registered, ranks run as long
// as they need (each watches its own progress timeout). Only connections
// that prove they know secret count as ranks; others are dropped. job, if
// not 0, is the run's job hash (see JobHash): a rank of another job (the
// same user's other run, with the same secret) is refused and the
// registration goes on; with 0, the first rank's job is the run's, and a
// rank of another is a mistake that ends the run. A rank's failure ends
// Serve with an error naming it, after every rank has been told to abort.
func Serve(ctx context.Context, ln net.Listener, size int, register time.Duration, secret Secret, job uint64) ([]Report, error) {
	if len(secret) == 0 {
		return nil, errNoSecret
	}
	if err := listenerError(ln); err != nil {
		return nil, err
	}
	clients := make([]*client, size)
	var mu sync.Mutex
	closeAll := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range clients {
			if c != nil {
				c.conn.Close()
			}
		}
	}
	defer closeAll()
	abort := func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range clients {
			if c != nil {
				c.send(storeReply{Abort: msg})
			}
		}
	}

	// Registration: every connection's handshake runs on its own, so
	// that one that says nothing holds up nobody.
	regCtx, cancel := context.WithTimeout(ctx, register)
	defer cancel()
	// regDone ends when registration does: handshakes still under way then
	// are strangers' (every rank has registered), and are cut off.
	regDone, endRegistration := context.WithCancel(regCtx)
	defer endRegistration()
	greetings := make(chan greeting)
	accepting := make(chan struct{})
	go func() {
		defer close(accepting)
		for {
			conn, err := acceptRetry(ln, func() bool { return regDone.Err() != nil })
			if err != nil {
				return
			}
			go func() {
				cutOff := context.AfterFunc(regDone, func() { conn.Close() })
				a := greetRank(conn, secret)
				if !cutOff() {
					return // closed under it
				}
				select {
				case greetings <- a:
				case <-regDone.Done():
					conn.Close()
				}
			}()
		}
	}()
	// Registration over, stop accepting: strangers that come later wait in
	// the backlog until the caller closes ln.
	endAccepting := sync.OnceFunc(func() {
		stopAccepting(ln)
		<-accepting
	})
	defer endAccepting()
	var refused refusals
	var others []string // ranks of other jobs, refused
	registered, runJob, jobRank := 0, "", -1
	if job != 0 {
		runJob = fmt.Sprintf("%016x", job)
	}
	for registered < size {
		var a greeting
		select {
		case a = <-greetings:
		case <-regDone.Done():
			if ctx.Err() != nil {
				abort(context.Cause(ctx).Error())
				return nil, context.Cause(ctx)
			}
			var missing []string
			for r, c := range clients {
				if c == nil {
					missing = append(missing, fmt.Sprint(r))
				}
			}
			msg := fmt.Sprintf("ranks %s never registered at the rendezvous %v within %v: were they started, with the same options and the same --rendezvous or --rendezvous-file?%s", strings.Join(missing, ","), ln.Addr(), register, refused.String())
			if len(others) > 0 {
				msg += "; refused as another job's (another collsim build, or different options): " + strings.Join(others, ", ")
			}
			abort("rendezvous failed: " + msg)
			return nil, errors.New(msg)
		}
		if a.client == nil {
			if a.refused != "" {
				refused.add(a.refused)
			}
			continue
		}
		c := a.client
		if r := c.reg; job != 0 && r.Job != runJob {
			c.send(storeReply{Error: "this rank runs another job than the rendezvous's (another collsim build, or different options): start every rank with the same command"})
			c.conn.Close()
			others = append(others, fmt.Sprintf("rank %d from %s", r.Rank, r.Host))
			continue
		}
		var bad string
		switch r := c.reg; {
		case r.Size != size:
			bad = fmt.Sprintf("rank %d says the run has %d ranks, the rendezvous expects %d: check the launcher's rank count", r.Rank, r.Size, size)
		case r.Rank < 0 || r.Rank >= size:
			bad = fmt.Sprintf("rank %d is outside 0..%d: check the launcher's environment", r.Rank, size-1)
		case clients[r.Rank] != nil:
			bad = fmt.Sprintf("rank %d registered twice (from %s and %s): two processes got the same rank", r.Rank, clients[r.Rank].reg.Host, r.Host)
		case runJob != "" && r.Job != runJob:
			bad = fmt.Sprintf("rank %d runs a different job from rank %d (another collsim build, or different options): start every rank with the same command", r.Rank, jobRank)
		}
		if bad != "" {
			c.send(storeReply{Error: bad})
			c.conn.Close()
			abort("rendezvous failed: " + bad)
			return nil, errors.New(bad)
		}
		if runJob == "" {
			runJob, jobRank = c.reg.Job, c.reg.Rank
		}
		mu.Lock()
		clients[c.reg.Rank] = c
		mu.Unlock()
		registered++
	}
	endRegistration()
	endAccepting()
	peers := make([]string, size)
	for r, c := range clients {
		peers[r] = c.reg.Addr
	}
	for _, c := range clients {
		c.send(storeReply{Peers: peers, Proof: peersProof(secret, c.nonce, c.reg.Nonce, peers)})
	}

	// Supervision: wait for every rank's hand-in.
	type outcome struct {
		rank int
		in   handIn
		err  error
	}
	outcomes := make(chan outcome, size)
	for r, c := range clients {
		go func() {
			line, err := c.rd.ReadBytes('\n')
			var in handIn
			if err == nil {
				err = json.Unmarshal(line, &in)
			}
			outcomes <- outcome{rank: r, in: in, err: err}
		}()
	}
	reports := make([]Report, size)
	// The first failure ends the run; but a rank that only saw a peer's
	// connection close reports a consequence, so the cause is waited for a
	// moment (the rank that failed first reports it, or its connection to
	// the rendezvous drops, within that time).
	secondary := ""
	var grace <-chan time.Time
	for left := size; left > 0; {
		var o outcome
		select {
		case o = <-outcomes:
			left--
		case <-grace:
			abort(secondary)
			return nil, errors.New(secondary)
		case <-ctx.Done():
			abort(context.Cause(ctx).Error())
			return nil, context.Cause(ctx)
		}
		var msg string
		switch {
		case o.err != nil:
			msg = fmt.Sprintf("rank %d (on %s) lost its connection to the rendezvous without reporting (%v): it exited or crashed, or the network failed", o.rank, clients[o.rank].reg.Host, o.err)
		case o.in.Error != "" && o.in.Secondary:
			if secondary == "" {
				secondary, grace = o.in.Error, time.After(time.Second)
			}
			continue
		case o.in.Error != "":
			msg = o.in.Error
		case o.in.Report == nil:
			msg = fmt.Sprintf("rank %d handed in nothing", o.rank)
		}
		if msg != "" {
			abort(msg)
			return nil, errors.New(msg)
		}
		reports[o.rank] = *o.in.Report
	}
	if secondary != "" {
		abort(secondary)
		return nil, errors.New(secondary)
	}
	mu.Lock()
	for _, c := range clients {
		c.send(storeReply{Done: true})
	}
	mu.Unlock()
	return reports, nil
}

// StoreConn is a rank's connection to the rendezvous.
type StoreConn struct {
	conn  net.Conn
	rd    *bufio.Reader
	rank  int
	final chan storeReply // the store's last word: abort or done
}

// Join registers rank at the rendezvous at addr (retrying until ctx ends,
// since the store may start after the ranks), announcing peerAddr as where
// its peers reach it, and returns every rank's address. Rank and store
// each prove they know secret. onAbort is called (from another goroutine)
// if the store later tells the rank to abort.
func Join(ctx context.Context, addr string, rank, size int, job uint64, secret Secret, peerAddr, host string, onAbort func(error)) (*StoreConn, []string, error) {
	if len(secret) == 0 {
		return nil, nil, fmt.Errorf("rank %d: %w", rank, errNoSecret)
	}
	var conn net.Conn
	for {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			conn = c
			break
		}
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("rank %d: cannot reach the rendezvous at %s: %v", rank, addr, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	sc := &StoreConn{conn: conn, rd: bufio.NewReaderSize(conn, maxRegistration), rank: rank, final: make(chan storeReply, 1)}
	fail := func(format string, args ...any) (*StoreConn, []string, error) {
		conn.Close()
		return nil, nil, fmt.Errorf("rank %d: "+format, append([]any{rank}, args...)...)
	}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetReadDeadline(dl)
	}
	var ch challenge
	line, err := sc.rd.ReadSlice('\n')
	if err == nil {
		err = json.Unmarshal(line, &ch)
	}
	if err != nil || len(ch.Nonce) != nonceBytes {
		return fail("the rendezvous at %s did not send a challenge (%v): is something else listening there?", addr, err)
	}
	nonce, err := newNonce()
	if err != nil {
		return fail("%v", err)
	}
	reg := registration{Rank: rank, Size: size, Job: fmt.Sprintf("%016x", job), Addr: peerAddr, Host: host, Nonce: nonce}
	reg.Proof = reg.proofOf(secret, ch.Nonce)
	b, _ := json.Marshal(reg)
	if _, err := conn.Write(append(b, '\n')); err != nil {
		return fail("registering at %s: %w", addr, err)
	}
	var reply storeReply
	// The peers' addresses: a line the store has not yet proved, so
	// bounded (every address with its quotes in 256 bytes).
	interrupt := context.AfterFunc(ctx, func() { conn.SetReadDeadline(time.Now()) })
	line, err = readLine(sc.rd, maxRegistration+256*size)
	interrupt()
	conn.SetReadDeadline(time.Time{})
	if err == nil {
		err = json.Unmarshal(line, &reply)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return fail("waiting for the other ranks at the rendezvous %s: %v", addr, context.Cause(ctx))
	case err != nil:
		return fail("waiting for the other ranks at the rendezvous %s: %v", addr, err)
	case reply.Error != "":
		return fail("the rendezvous refused it: %s", printable(reply.Error))
	case reply.Abort != "":
		conn.Close()
		return nil, nil, &AbortedError{Rank: rank, Reason: reply.Abort}
	case !sameProof(reply.Proof, peersProof(secret, ch.Nonce, nonce, reply.Peers)):
		return fail("the rendezvous at %s did not prove it knows the job's secret: another program answers there, or rank 0 has another secret", addr)
	case len(reply.Peers) != size:
		return fail("the rendezvous sent %d addresses for %d ranks", len(reply.Peers), size)
	}
	go func() {
		line, err := readLine(sc.rd, maxStoreLine)
		var r storeReply
		if err != nil || json.Unmarshal(line, &r) != nil {
			r = storeReply{Abort: "lost the rendezvous (the launcher or rank 0 exited)"}
		}
		if r.Abort != "" && onAbort != nil {
			onAbort(&AbortedError{Rank: rank, Reason: r.Abort})
		}
		sc.final <- r
	}()
	return sc, reply.Peers, nil
}

// maxStoreLine bounds the store's last line to a rank (abort or done).
const maxStoreLine = 64 << 10

// readLine reads a line of at most limit bytes.
func readLine(rd *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := rd.ReadSlice('\n')
		line = append(line, chunk...)
		switch {
		case len(line) > limit:
			return nil, fmt.Errorf("a line longer than %d bytes", limit)
		case err == bufio.ErrBufferFull:
			continue
		}
		return line, err
	}
}

// printable is text from another process made safe to print: control
// characters (a terminal's escape sequences among them) become '?', and
// it is cut at 1,000 bytes.
func printable(text string) string {
	if len(text) > 1000 {
		text = text[:1000] + "..."
	}
	return strings.Map(func(r rune) rune {
		if r < ' ' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return '?'
		}
		return r
	}, text)
}

// Finish hands in the rank's report (or its failure, when runErr is not
// nil) and waits until the store says every rank is done, or to abort.
func (sc *StoreConn) Finish(rep *Report, runErr error, timeout time.Duration) error {
	defer sc.conn.Close()
	in := handIn{Report: rep}
	if runErr != nil {
		var lost *PeerLostError
		in = handIn{Error: runErr.Error(), Secondary: errors.As(runErr, &lost)}
	}
	b, _ := json.Marshal(in)
	if _, err := sc.conn.Write(append(b, '\n')); err != nil && runErr == nil {
		return fmt.Errorf("rank %d: handing in the report: %w", sc.rank, err)
	}
	if runErr != nil {
		return runErr
	}
	select {
	case r := <-sc.final:
		if r.Abort != "" {
			return &AbortedError{Rank: sc.rank, Reason: r.Abort}
		}
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("rank %d: the rendezvous did not confirm the end of the run within %v", sc.rank, timeout)
	}
}

// Summary is one call over every rank, as OSU reports it: the average,
// least and greatest of the ranks' average times. Median is the median
// over iterations of the slowest rank's time, the figure a simulation's
// makespan predicts.
type Summary struct {
	Timing
	Median time.Duration `json:"median_ns"`
	// Slowest is the slowest rank's time in each timed iteration, in the
	// order they ran.
	Slowest []time.Duration `json:"slowest_ns"`
}

// Summarize combines the ranks' reports call by call, in the order rank
// 0 ran them.
func Summarize(reports []Report) []Summary {
	if len(reports) == 0 {
		return nil
	}
	out := make([]Summary, len(reports[0].Results))
	for i, res := range reports[0].Results {
		s := Summary{Timing: Timing{Name: res.Name, Bytes: res.Bytes, Iterations: res.Iterations, Min: res.Avg, Verified: true}}
		var sum time.Duration
		slowest := make([]time.Duration, len(res.Times))
		for _, rep := range reports {
			if i >= len(rep.Results) {
				s.Verified = false
				continue
			}
			r := &rep.Results[i]
			sum += r.Avg
			s.Min, s.Max = min(s.Min, r.Avg), max(s.Max, r.Avg)
			s.Verified = s.Verified && r.Verified
			for k := range min(len(slowest), len(r.Times)) {
				slowest[k] = max(slowest[k], r.Times[k])
			}
		}
		s.Avg = sum / time.Duration(len(reports))
		if len(slowest) > 0 {
			s.Slowest = slices.Clone(slowest)
			slices.Sort(slowest)
			s.Median = (slowest[(len(slowest)-1)/2] + slowest[len(slowest)/2]) / 2
		}
		out[i] = s
	}
	return out
}

// MinSetup is the least time a run gives its ranks to start, register at
// the rendezvous and connect, whatever its timeout: a stall timeout of a
// few seconds (to catch a stalled rank quickly) must not fail a run whose
// processes a busy machine or a batch system starts slowly.
const MinSetup = 30 * time.Second

// SetupTimeout bounds the start of a run whose ranks give up after
// timeout without progress.
func SetupTimeout(timeout time.Duration) time.Duration { return max(timeout, MinSetup) }

// AbortedError is a rank told by the rendezvous to abort: another rank
// failed or was stopped, and Reason (as the rendezvous gave it, another
// process's text: printed made printable) says which.
type AbortedError struct {
	Rank   int
	Reason string
}

// Error says which rank aborts, and why.
func (e *AbortedError) Error() string {
	return fmt.Sprintf("rank %d aborts: %s", e.Rank, printable(e.Reason))
}

// WrongResultError is a call whose result a rank checked and found wrong:
// a schedule that moves the wrong data, as a simulated run's CheckError
// is (collsim exits 3 for either).
type WrongResultError struct{ Err error }

// wrongResult begins a WrongResultError's text, which a rank passes on to
// its peers as the reason it stopped.
const wrongResult = "wrong result: "

func (e *WrongResultError) Error() string { return wrongResult + e.Err.Error() }
func (e *WrongResultError) Unwrap() error { return e.Err }

// WrongResult reports whether err is a wrong result found by this rank,
// or by a peer that stopped this one for it.
func WrongResult(err error) bool {
	var wr *WrongResultError
	if errors.As(err, &wr) {
		return true
	}
	reason, ok := PeerReason(err)
	return ok && strings.Contains(reason, wrongResult)
}

// PeerReason is the reason another rank gave for stopping this one, when
// err is that: a peer giving up, or the rendezvous's word to abort. A
// peer lost without a word gives none.
func PeerReason(err error) (string, bool) {
	var lost *PeerLostError
	var aborted *AbortedError
	switch {
	case errors.As(err, &lost) && lost.GaveUp != "":
		return lost.GaveUp, true
	case errors.As(err, &aborted):
		return aborted.Reason, true
	}
	return "", false
}
