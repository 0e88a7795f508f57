//go:build unix

package sweep

import (
	"errors"
	"os"
	"syscall"
)

// lock takes f for this sweep alone: two sweeps writing one output would
// interleave their rows. The lock goes with the process.
func lock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errors.New("another collsim sweep is writing it; wait for it, or give another -o")
	}
	return err
}
