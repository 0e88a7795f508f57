#include "textflag.h"

// func storeRelease(addr *uint64, val uint64)
// A plain store: on amd64 stores are released in program order.
TEXT ·storeRelease(SB), NOSPLIT, $0-16
	MOVQ	addr+0(FP), AX
	MOVQ	val+8(FP), BX
	MOVQ	BX, 0(AX)
	RET
