//go:build !linux

package realrun

import "net"

// serveTCP: elsewhere than on Linux, TCP connections keep their reader and
// writer goroutines.
func serveTCP(net.Conn) (servedConn, bool) { return nil, false }
