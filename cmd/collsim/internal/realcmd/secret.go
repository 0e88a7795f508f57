package realcmd

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/collsim/collsim/configs"
	"github.com/collsim/collsim/sim/realrun"
)

// secretEnv names the environment variable that carries a job's secret:
// the local launcher sets it for its ranks, and a user sets it for srun
// (which passes the environment on) or mpirun (-x COLLSIM_SECRET).
const secretEnv = "COLLSIM_SECRET"

// givenSecret is the secret the user or the launcher gave this rank: the
// file of --secret-file, else $COLLSIM_SECRET; nil if neither.
func givenSecret(file string, getenv func(string) string) (realrun.Secret, error) {
	if file != "" {
		b, err := readPrivateFile(file, "the secret file")
		if err != nil {
			return nil, err
		}
		return realrun.ParseSecret(string(b), "--secret-file "+file)
	}
	if v := getenv(secretEnv); v != "" {
		return realrun.ParseSecret(v, "$"+secretEnv)
	}
	return nil, nil
}

// readPrivateFile reads a small file that holds a secret, refusing one
// that another user owns or could read: a secret others can read protects
// nothing, and one another user wrote could be theirs.
func readPrivateFile(path, what string) ([]byte, error) {
	// Non-blocking, so that a FIFO planted there does not hang the rank
	// (it is refused below, as anything but a regular file is).
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	fi, err := f.Stat() // of the file opened, not of whatever the path names later
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s %s is not a regular file (%s)", what, path, fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return nil, fmt.Errorf("%s %s belongs to user %d, not to this one (%d): a job's secret must be the user's own", what, path, st.Uid, os.Getuid())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s %s can be read by others (mode %#o): chmod 600 %s", what, path, perm, path)
	}
	b, err := io.ReadAll(configs.Bounded(f, 1<<10, what))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}
