package configs

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Bounds on the files collsim reads whole or line by line: a path that
// names /dev/zero, a growing log or the wrong file must end in an error
// after reading at most this much, not fill memory.
const (
	MaxConfigBytes = 1 << 20   // machine configs
	MaxTraceBytes  = 256 << 20 // noise traces
	MaxLogBytes    = 64 << 20  // OSU, nccl-tests and Netgauge logs
)

// ReadFile reads the file at path whole, refusing one larger than limit
// bytes; what names the kind of file in the error.
func ReadFile(path string, limit int64, what string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(Bounded(f, limit, what))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// Bounded returns a reader of r that fails, once more than limit bytes
// have been read, with an error naming what and the limit.
func Bounded(r io.Reader, limit int64, what string) io.Reader {
	return &bounded{r: r, left: limit, limit: limit, what: what}
}

// ErrTooLarge is the error of a file larger than its bound.
var ErrTooLarge = errors.New("file too large")

type bounded struct {
	r           io.Reader
	left, limit int64
	what        string
}

func (b *bounded) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.err()
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte past the limit tells a file of exactly limit bytes from a larger one
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n + int(b.left), b.err()
	}
	return n, err
}

func (b *bounded) err() error {
	return fmt.Errorf("%w: more than %s, too large for %s (collsim reads at most that much of one)", ErrTooLarge, FormatBytes(b.limit), b.what)
}
