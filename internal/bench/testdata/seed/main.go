// Command seed prints the 16 random bytes the operating system handed the
// process at start, as the Go runtime left them: it seeds its random state
// from them, then overwrites them with numbers drawn from that state.
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"unsafe"
)

func main() {
	auxv, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	const atRandom = 25
	word := int(unsafe.Sizeof(uintptr(0)))
	read := func(b []byte) uint64 {
		if word == 4 {
			return uint64(binary.NativeEndian.Uint32(b))
		}
		return binary.NativeEndian.Uint64(b)
	}
	for i := 0; i+2*word <= len(auxv); i += 2 * word {
		tag, val := read(auxv[i:]), read(auxv[i+word:])
		if tag == atRandom {
			fmt.Printf("%x\n", *(*[16]byte)(unsafe.Pointer(uintptr(val))))
			return
		}
	}
	fmt.Fprintln(os.Stderr, "no AT_RANDOM")
	os.Exit(1)
}
