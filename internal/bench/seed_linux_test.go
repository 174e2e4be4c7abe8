package bench

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// seedBinary builds testdata/seed, which prints a number drawn from the
// runtime's random state.
func seedBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "seed")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join("testdata", "seed")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build testdata/seed: %v\n%s", err, out)
	}
	return bin
}

// seedOutput runs prog args and returns what it printed, with the seed
// fixed when fixed is set.
func seedOutput(t *testing.T, fixed bool, last, prog string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	newCmd := func() *exec.Cmd {
		out.Reset()
		errOut.Reset()
		cmd := exec.Command(prog, args...)
		cmd.Env = append(os.Environ(), countEnv()...)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		return cmd
	}
	if !fixed {
		if err := newCmd().Run(); err != nil {
			t.Fatalf("%s: %v\n%s", prog, err, errOut.String())
		}
		return strings.TrimSpace(out.String())
	}
	ok, err := runWithFixedSeed(newCmd, last, nil)
	if err != nil {
		t.Fatalf("%s with a fixed seed: %v\n%s", prog, err, errOut.String())
	}
	if !ok {
		t.Fatalf("%s: the seed was not fixed (tracing refused: %v)", prog, ptraceRefused.Load())
	}
	return strings.TrimSpace(out.String())
}

// TestFixedSeed checks that a program counted twice under valgrind draws
// the same random numbers with the seed fixed, and that it draws different
// ones without (so the program does depend on its start-up bytes).
func TestFixedSeed(t *testing.T) {
	bin := seedBinary(t)
	if a, b := seedOutput(t, false, "", bin), seedOutput(t, false, "", bin); a == b {
		t.Fatalf("two plain runs drew the same number %s: the program does not show its seed", a)
	}
	prog, args := fixedAddresses(valgrind(t), "--tool=cachegrind", "--cache-sim=no", "--branch-sim=no",
		"--cachegrind-out-file="+filepath.Join(t.TempDir(), "cachegrind.out"), bin)
	a, b := seedOutput(t, true, "cachegrind-", prog, args...), seedOutput(t, true, "cachegrind-", prog, args...)
	if a == "" || a != b {
		t.Errorf("under cachegrind with the seed fixed, two runs drew %q and %q, want the same number", a, b)
	}
}

func TestAuxvValue(t *testing.T) {
	word := func(v uint64) []byte {
		b := make([]byte, 8)
		for i := range b {
			b[i] = byte(v >> (8 * i))
		}
		return b
	}
	var auxv []byte
	for _, v := range []uint64{6, 4096, atRandom, 0x7ffd1234, 0, 0} {
		auxv = append(auxv, word(v)...)
	}
	if v, err := auxvValue(auxv, atRandom); err != nil || v != 0x7ffd1234 {
		t.Errorf("AT_RANDOM: %#x, %v", v, err)
	}
	if _, err := auxvValue(auxv, 33); err == nil {
		t.Error("a tag the vector does not hold was found")
	}
	if _, err := auxvValue(auxv[:12], 6); err == nil {
		t.Error("a truncated vector gave a value")
	}
}
