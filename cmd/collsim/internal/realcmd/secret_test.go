package realcmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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
