#include "textflag.h"

// func storeRelease(addr *uint64, val uint64)
TEXT ·storeRelease(SB), NOSPLIT, $0-16
	MOVD	addr+0(FP), R0
	MOVD	val+8(FP), R1
	STLR	R1, (R0)
	RET
