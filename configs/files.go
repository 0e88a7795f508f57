package configs

import (
	"bytes"
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
	// Results tables (a sweep's output, run --csv), which plot, report,
	// merge and sweep --resume read; their lines, each a row, are bounded
	// too, so that a file without newlines is refused after MaxLineBytes,
	// not held whole.
	MaxTableBytes = 1 << 30
	MaxLineBytes  = 1 << 20
)

// ReadFile reads the file at path whole, refusing one larger than limit
// bytes; what names the kind of file in the error.
func ReadFile(path string, limit int64, what string) ([]byte, error) {
	return readAll(path, func(f io.Reader) io.Reader { return Bounded(f, limit, what) })
}

// readAll reads the file at path whole through the reader bound makes of
// it, naming the path in an error.
func readAll(path string, bound func(io.Reader) io.Reader) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(bound(f))
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

// BoundedTable is Bounded for a results table: it also fails at a line
// longer than MaxLineBytes.
func BoundedTable(r io.Reader, what string) io.Reader {
	return &bounded{r: r, left: MaxTableBytes, limit: MaxTableBytes, what: what, lineLimit: MaxLineBytes}
}

// ReadTable reads the results table at path whole, as BoundedTable bounds
// it.
func ReadTable(path, what string) ([]byte, error) {
	return readAll(path, func(f io.Reader) io.Reader { return BoundedTable(f, what) })
}

// ErrTooLarge is the error of a file larger than its bound.
var ErrTooLarge = errors.New("file too large")

type bounded struct {
	r           io.Reader
	left, limit int64
	what        string
	// lineLimit, when not 0, bounds a line; line counts the bytes read
	// since the last newline.
	lineLimit, line int64
	long            error // the error of a line too long, returned from then on
}

func (b *bounded) Read(p []byte) (int, error) {
	if b.long != nil {
		return 0, b.long
	}
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
	for rest := p[:n]; b.lineLimit > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			b.line += int64(len(rest))
		} else {
			b.line += int64(i)
		}
		if b.line > b.lineLimit {
			b.long = fmt.Errorf("%w: a line longer than %s, too long for %s; is this the right file?", ErrTooLarge, FormatBytes(b.lineLimit), b.what)
			return n, b.long
		}
		if i < 0 {
			break
		}
		rest, b.line = rest[i+1:], 0
	}
	return n, err
}

func (b *bounded) err() error {
	return fmt.Errorf("%w: more than %s, too large for %s (collsim reads at most that much of one)", ErrTooLarge, FormatBytes(b.limit), b.what)
}
