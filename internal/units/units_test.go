package units

import (
	"strings"
	"testing"
)

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Seconds(0), "0s"},
		{Seconds(850e-9), "850ns"},
		{Seconds(12.34e-6), "12.3µs"},
		{Seconds(-4.5e-3), "-4.5ms"},
		{Seconds(2.1), "2.1s"},
		{Seconds(750), "12.5m"},
		{Millis(2.83), "2.83ms"},
		{Rate(20383.4), "20,383 req/s"},
		{Rate(12.345), "12.3 req/s"},
		{Bytes(512), "512 B"},
		{Bytes(1536), "1.5 KiB"},
		{Bytes(3.46 * (1 << 20)), "3.46 MiB"},
		{Bytes(-2048), "-2 KiB"},
		{Count(113), "113"},
		{Count(28.1), "28.1"},
		{Count(12345), "12.3k"},
		{Count(2.5e6), "2.5M"},
		{Thousands(-1234567), "-1,234,567"},
		{Thousands(999), "999"},
		{Percent(0.123), "12.3%"},
		{Percent(0.0005), "0.05%"},
		{Percent(0.00001), "<0.01%"},
		{Percent(0), "0.0%"},
		{Value(1500, "nanoseconds"), "1.5µs"},
		{Value(2048, "bytes"), "2 KiB"},
		{Value(7, "count"), "7"},
		{Number(18640), "18,640"},
		{Number(18640.4), "18,640"},
		{Number(3.14159), "3.14"},
		{Number(0.000123456), "0.000123"},
		{Number(-0.5), "-0.5"},
		{Value(0, "nanoseconds"), "0s"},
		{Value(850, "nanoseconds"), "850ns"},
		{Value(12_345, "nanoseconds"), "12.3µs"},
		{Value(270_000_000, "nanoseconds"), "270ms"},
		{Value(1_770_000_000, "nanoseconds"), "1.77s"},
		{Value(-20_000_000, "nanoseconds"), "-20ms"},
		{Value(900, "bytes"), "900 B"},
		{Value(2048, "bytes"), "2 KiB"},
		{Value(314_572_800, "bytes"), "300 MiB"},
		{Value(9999, "count"), "9999"},
		{Value(307_000, "count"), "307k"},
		{Value(2_100_000, "count"), "2.1M"},
		{Count(9.25), "9.25"},
		{Thousands(250000), "250,000"},
		{Thousands(-1234), "-1,234"},
		{Thousands(12), "12"},
		{Percent(0.1234), "12.3%"},
		{Percent(0), "0.0%"},
		{Percent(0.0005), "0.05%"},
		{Percent(0.00004), "<0.01%"},
		{Rate(22727.3), "22,727 req/s"},
		{Rate(12.34), "12.3 req/s"},
		{Millis(0.31), "310µs"},
		{Millis(1.9), "1.9ms"},
		{Millis(1500), "1.5s"},
		// A value that rounds up to the next prefix takes it.
		{Seconds(999.9e-9), "1µs"},
		{Seconds(999.4e-9), "999ns"},
		{Seconds(999.96e-6), "1ms"},
		{Seconds(999.96e-3), "1s"},
		{Seconds(-999.9e-9), "-1µs"},
		{Seconds(599.999), "10.0m"},
		{Bytes(1023.9), "1 KiB"},
		{Bytes(1023), "1023 B"},
		{Bytes(1048575.5), "1 MiB"},
		{Count(9999.9), "10k"},
		{Count(999_999), "1M"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestNumberNeverENotation checks values over the whole range a
// measurement can take.
func TestNumberNeverENotation(t *testing.T) {
	for x := 1e-12; x < 1e18; x *= 7.3 {
		for _, v := range []float64{x, -x} {
			if s := Number(v); strings.ContainsAny(s, "eE") {
				t.Errorf("Number(%v) = %q", v, s)
			}
		}
	}
}
