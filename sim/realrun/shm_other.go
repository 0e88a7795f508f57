//go:build !linux

package realrun

import (
	"errors"
	"net"
	"runtime"
)

// Shared-memory channels need Linux (/dev/shm, futexes): here every pair
// keeps to TCP.

const tokenBytes = 16

const shmDir = ""

// shmPoll is unused here: no channel is polled.
const shmPoll = 0

var (
	errNoShared         = errors.New("shared-memory channels need Linux")
	errPeerClosedShared = errNoShared
)

type segment struct {
	base  string
	token [tokenBytes]byte
}

type sharedConn struct{ net.Conn }

func ringBytes(int) int                           { return 0 }
func sharedHostID() ([16]byte, bool)              { return [16]byte{}, false }
func machineID() ([16]byte, bool)                 { return [16]byte{}, false }
func createSegment(string, int) (*segment, error) { return nil, errNoShared }
func openSegment(string, string, [tokenBytes]byte, int) (*segment, error) {
	return nil, errNoShared
}
func (s *segment) unlink() {}

// RemoveFilesOf removes the shared-memory channel files of processes
// pids: none, here.
func RemoveFilesOf([]int) {}

// RemoveOwnFiles removes the shared-memory channel files this process
// created: none, here.
func RemoveOwnFiles()                               {}
func (s *segment) release()                         {}
func (s *segment) conn(bool, net.Conn) *sharedConn  { return nil }
func (c *sharedConn) pollWhenAlone()                {}
func (c *sharedConn) readSome([]byte) (int, error)  { return 0, errNoShared }
func (c *sharedConn) writeSome([]byte) (int, error) { return 0, errNoShared }
func (c *sharedConn) writeWhole([]byte)             {}
func (c *sharedConn) waitReadable()                 {}
func (c *sharedConn) waitRoom()                     {}

// SharedMemoryAvailable reports why ranks on this host cannot share
// memory: here, always.
func SharedMemoryAvailable() error { return errNoShared }

func readRemote(int, uintptr, []byte) error { return errNoShared }

func mayRead(int, uintptr, []byte) bool { return false }
func (s *segment) describe([]byte)      {}

// yieldCore lets the rank's other goroutines run (no sched_yield here).
func yieldCore() { runtime.Gosched() }

// ownCPUs is unknown here: machineCores counts the process's CPUs.
func ownCPUs() cpuSet { return cpuSet{} }
