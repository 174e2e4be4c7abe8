//go:build !linux

package bench

// fixedAddresses returns prog and args unchanged: turning address
// randomization off for one command (setarch -R) is Linux's.
func fixedAddresses(prog string, args ...string) (string, []string) {
	return prog, args
}
