package realcmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/collsim/collsim/sim/realrun"
)

// TestRendezvousFileCarriesTheSecret: rank 0's rendezvous file is the
// user's alone (mode 600) and hands its secret to the other ranks; a file
// others can read, or another user's, is not taken.
func TestRendezvousFileCarriesTheSecret(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rdv")
	secret, err := realrun.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	if err := writeRendezvousFile(path, "10.0.0.1:4000", 0xabc, secret); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("the rendezvous file has mode %#o, want 0600", perm)
	}
	ctx := context.Background()
	addr, got, err := readRendezvousFile(ctx, path, 0xabc, time.Second)
	if err != nil || addr != "10.0.0.1:4000" || got.String() != secret.String() {
		t.Errorf("read %q, %v, %v; want 10.0.0.1:4000 and the secret written", addr, got, err)
	}
	// Without a secret (the user gave every rank one), only the address.
	if err := writeRendezvousFile(path, "10.0.0.1:4001", 0xabc, nil); err != nil {
		t.Fatal(err)
	}
	if addr, got, err := readRendezvousFile(ctx, path, 0xabc, time.Second); err != nil || addr != "10.0.0.1:4001" || got != nil {
		t.Errorf("read %q, %v, %v; want 10.0.0.1:4001 and no secret", addr, got, err)
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readRendezvousFile(ctx, path, 0xabc, 300*time.Millisecond); err == nil || !strings.Contains(err.Error(), "can be read by others (mode 0644)") {
		t.Errorf("a file others can read was taken, or the error does not say why not: %v", err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, _, err := readRendezvousFile(ctx, path, 0xabc, 300*time.Millisecond); err == nil || !strings.Contains(err.Error(), "belongs to user 65534") {
			t.Errorf("another user's file was taken, or the error does not say why not: %v", err)
		}
	}
}

// TestGivenSecret: --secret-file comes before $COLLSIM_SECRET; neither
// gives none.
func TestGivenSecret(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == secretEnv {
				return v
			}
			return ""
		}
	}
	if s, err := givenSecret("", env("")); s != nil || err != nil {
		t.Errorf("no secret given: %v, %v", s, err)
	}
	if s, err := givenSecret("", env("00112233445566778899aabbccddeeff")); err != nil || s.String() != "00112233445566778899aabbccddeeff" {
		t.Errorf("from the environment: %v, %v", s, err)
	}
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte("ffeeddccbbaa99887766554433221100\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := givenSecret(path, env("00112233445566778899aabbccddeeff")); err != nil || s.String() != "ffeeddccbbaa99887766554433221100" {
		t.Errorf("from the file: %v, %v", s, err)
	}
}

// TestPrivateFileRefusesAFIFO: a FIFO at a secret's or a rendezvous
// file's path (which another user can plant in a shared directory) is
// refused at once; opening it for reading would wait for a writer forever.
func TestPrivateFileRefusesAFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := readPrivateFile(path, "the secret file")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
			t.Errorf("a FIFO: %v, want it refused as not a regular file", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO hung")
	}
}

// TestFileKeyFollowsTheLaunch: the rendezvous file of one launch is not
// another's, even for the same command (the same job hash).
func TestFileKeyFollowsTheLaunch(t *testing.T) {
	env := func(job, step string) func(string) string {
		return func(k string) string {
			switch k {
			case "SLURM_JOB_ID":
				return job
			case "SLURM_STEP_ID":
				return step
			}
			return ""
		}
	}
	a, b, c := fileKey(7, env("100", "0")), fileKey(7, env("101", "0")), fileKey(7, env("100", "1"))
	if a == b || a == c || b == c {
		t.Errorf("keys of three launches: %x %x %x, want three different", a, b, c)
	}
	if fileKey(7, env("100", "0")) != a || fileKey(8, env("100", "0")) == a {
		t.Error("the key must follow the job hash and the launch, and only them")
	}
}

// A rendezvous file that holds another job's address (rank 0 given other
// options, or a file left from an earlier launch) is named as such when
// the wait ends, not as a rank 0 that never wrote (a new user's trial:
// both ranks blamed a missing start).
func TestRendezvousFileOfAnotherJob(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rdv")
	if err := writeRendezvousFile(path, "10.0.0.1:4000", 0xdef, nil); err != nil {
		t.Fatal(err)
	}
	_, _, err := readRendezvousFile(context.Background(), path, 0xabc, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "is another job's: rank 0 runs with other options than this rank (every rank must be given the same)") {
		t.Errorf("another job's file: %v", err)
	}
	os.Remove(path)
	_, _, err = readRendezvousFile(context.Background(), path, 0xabc, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not write its rendezvous address") {
		t.Errorf("no file: %v", err)
	}
}
