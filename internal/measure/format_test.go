package measure

import "testing"

// TestFormatRounding checks that a value that rounds to the next prefix is
// written with it, alone and in tables, and never as "1000ns".
func TestFormatRounding(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{Format(999.9e-9, "sec/op"), "1µs"},
		{Format(999.9, "ns/op"), "1µs"},
		{Format(999.4e-9, "sec/op"), "999ns"},
		{Format(1.5e-6, "sec/op"), "1.5µs"},
		{Format(1023.9, "B/op"), "1 KiB"},
		{Format(0, "allocs/op"), "0"},
		{Format(20413, Instructions), "20,413"},
		{TableValue(999.9e-9, "sec/op"), "999.9n"},
		{TableValue(1.5e-6, "sec/op"), "1.500µ"},
		{TableScale("sec/op", []float64{999.9e-9, 1.5e-6}).Format(999.9e-9), "999.9n"},
		{TableScale("B/op", []float64{10952, 1007}).Format(1007), "1007.0"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
