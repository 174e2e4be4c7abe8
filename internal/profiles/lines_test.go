package profiles

import "testing"

func TestLines(t *testing.T) {
	p := load(t, "cpu")
	lt, err := Lines(p, SampleCPU, func(fn string) bool { return fn == "main.burnCPU" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	ft, err := Functions(p, SampleCPU, nil)
	if err != nil {
		t.Fatal(err)
	}
	fn, _ := ft.Find("main.burnCPU")
	var flat int64
	burn := siteLine(t, "burn")
	hot := false
	for i, r := range lt.Rows {
		if r.Function != "main.burnCPU" || r.Line < fn.Line || r.Line > burn+5 {
			t.Errorf("row %+v outside main.burnCPU (starts at %d)", r, fn.Line)
		}
		if i > 0 && r.Line <= lt.Rows[i-1].Line {
			t.Error("rows not in source order")
		}
		if r.Line >= burn && r.Line <= burn+2 && r.Flat > 0 {
			hot = true
		}
		flat += r.Flat
	}
	if !hot {
		t.Errorf("no flat time on the loop body (lines %d-%d): %+v", burn, burn+2, lt.Rows)
	}
	if flat != fn.Flat {
		t.Errorf("lines' flat sum %d != function flat %d", flat, fn.Flat)
	}
}
