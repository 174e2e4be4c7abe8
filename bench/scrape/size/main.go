// Command size measures what the profile-series store takes on disk for
// one target scraped every 10 s with every default profile type, over a
// simulated span (a day by default) of replayed real scrapes (package
// sim): bytes per sample row and against the raw pprof, per type and in
// all, and bytes per target per day at full resolution and under the
// default retention and compaction.
//
//	go run ./bench/scrape/size [-hours 24] [-profiles DIR]
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/bench/scrape/sim"
	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/store"
)

func main() {
	hours := flag.Float64("hours", 24, "the span simulated, in hours of 10 s scrapes")
	dir := flag.String("profiles", "internal/profseries/testdata/leftpad", "the recorded scrapes replayed")
	flag.Parse()
	if err := run(*hours, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "size:", err)
		os.Exit(1)
	}
}

var epoch = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

type tally struct{ rows, raw int64 }

func run(hours float64, dir string) error {
	ctx := context.Background()
	st, path, err := tempStore(ctx)
	if err != nil {
		return err
	}
	defer os.RemoveAll(filepath.Dir(path))
	defer st.Close()
	target := profseries.NewLabels(map[string]string{"job": "leftpad", "instance": "10.0.0.1:6060"})
	r, err := sim.Load(dir, sim.Types, target, 1)
	if err != nil {
		return err
	}
	rounds := int(hours * 360)
	tallies := map[string]*tally{}
	began := time.Now()
	for i := range rounds {
		at := epoch.Add(time.Duration(i) * r.Interval)
		for _, typ := range sim.Types {
			sc, err := r.Next(typ, at)
			if err != nil {
				return err
			}
			if err := st.Append(ctx, sc); err != nil {
				return err
			}
			t := tallies[typ]
			if t == nil {
				t = &tally{}
				tallies[typ] = t
			}
			t.rows += int64(len(sc.Profile.Sample))
			t.raw += sc.RawBytes
		}
	}
	fmt.Printf("%d rounds of 10 s scrapes (%.1f h) of %v replayed from %s, stored in %s\n\n", rounds, hours, sim.Types, dir, time.Since(began).Round(time.Second))
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()

	// The blocks as each scrape was stored, then once retention packed
	// the hours that ended (an hour later: every hour of the span), with
	// the rollups it made apart: hourly ones, kept as long as their hour,
	// and ten-minute ones, kept for a day (all of this day's).
	end := epoch.Add(time.Duration(rounds) * r.Interval)
	apart := map[string]int64{}
	for _, typ := range sim.Types {
		if apart[typ], err = typeBytes(db, `prof_blocks`, typ, `resolution = 0`); err != nil {
			return err
		}
	}
	packing := time.Now()
	rep, err := st.ApplyRetention(ctx, end.Add(time.Hour))
	if err != nil {
		return err
	}
	fmt.Printf("retention an hour after the last scrape packed %d of %d blocks in %s (the rollups included)\n\n", rep.Packed, rounds*len(sim.Types), time.Since(packing).Round(time.Millisecond))
	var rows, raw, blocks, apartAll, rollups, tens int64
	fmt.Printf("%-10s %10s %12s %10s %8s %8s %10s %8s %10s %10s\n", "type", "rows", "raw pprof", "packed", "B/row", "% raw", "apart", "B/row", "hourly", "10-minute")
	for _, typ := range sim.Types {
		b, err := packedBytes(db, typ)
		if err != nil {
			return err
		}
		ru, err := typeBytes(db, `prof_blocks`, typ, fmt.Sprint(`resolution = `, -int64(time.Hour)))
		if err != nil {
			return err
		}
		rt, err := typeBytes(db, `prof_blocks`, typ, fmt.Sprint(`resolution = `, -int64(10*time.Minute)))
		if err != nil {
			return err
		}
		t := tallies[typ]
		fmt.Printf("%-10s %10d %12d %10d %8.2f %7.2f%% %10d %8.2f %10d %10d\n", typ, t.rows, t.raw, b, float64(b)/float64(t.rows), 100*float64(b)/float64(t.raw),
			apart[typ], float64(apart[typ])/float64(t.rows), ru, rt)
		rows, raw, blocks, apartAll, rollups, tens = rows+t.rows, raw+t.raw, blocks+b, apartAll+apart[typ], rollups+ru, tens+rt
	}
	symbols, err := symbolBytes(db)
	if err != nil {
		return err
	}
	var stacks int64
	if err := db.QueryRow(`SELECT COUNT(*) FROM prof_stacks`).Scan(&stacks); err != nil {
		return err
	}
	total := blocks + symbols
	fmt.Printf("%-10s %10d %12d %10d %8.2f %7.2f%% %10d %8.2f %10d %10d\n", "blocks", rows, raw, blocks, float64(blocks)/float64(rows), 100*float64(blocks)/float64(raw),
		apartAll, float64(apartAll)/float64(rows), rollups, tens)
	fmt.Printf("%-10s %10s %12s %10d %8.2f %7.2f%%   (%d rows of stacks, label sets included)\n", "symbols", "", "", symbols, float64(symbols)/float64(rows), 100*float64(symbols)/float64(raw), stacks)
	fmt.Printf("%-10s %10d %12d %10d %8.2f %7.2f%%\n", "all", rows, raw, total, float64(total)/float64(rows), 100*float64(total)/float64(raw))
	fmt.Printf("%-10s %10s %12s %10d %8.2f %7.2f%%   (the hourly rollups retention keeps to answer whole hours)\n", "rollups", "", "", rollups, float64(rollups)/float64(rows), 100*float64(rollups)/float64(raw))
	fmt.Printf("%-10s %10d %12d %10d %8.2f %7.2f%%\n", "all+rollup", rows, raw, total+rollups, float64(total+rollups)/float64(rows), 100*float64(total+rollups)/float64(raw))
	fmt.Printf("%-10s %10s %12s %10d %8.2f %7.2f%%   (the ten-minute rollups of the last day, kept for a day: the same bytes whatever the days kept)\n", "10-minute", "", "", tens, float64(tens)/float64(rows), 100*float64(tens)/float64(raw))
	perDay := func(b int64) float64 { return float64(b) / hours * 24 }
	fmt.Printf("\nper target per day at full resolution: %s (blocks %s, symbols %s)\n", mb(perDay(total)), mb(perDay(blocks)), mb(perDay(symbols)))

	// Compaction, as the default retention does it: everything older
	// than 3 days into 1-minute windows, older than 15 days into 10-minute
	// ones.
	// Each with the hourly rollups kept beside, and packs; the last
	// day's ten-minute rollups once.
	var byRes [3]int64
	byRes[0] = blocks + rollups
	for k, now := range []time.Time{end.Add(store.DefaultRetention.Raw + time.Minute), end.Add(store.DefaultRetention.Minute + 10*time.Minute)} {
		if _, err := st.ApplyRetention(ctx, now); err != nil {
			return err
		}
		if err := db.QueryRow(`SELECT (SELECT COALESCE(SUM(LENGTH(data)), 0) FROM prof_blocks) + (SELECT COALESCE(SUM(LENGTH(data)), 0) FROM prof_packs)`).Scan(&byRes[k+1]); err != nil {
			return err
		}
	}
	ret := store.DefaultRetention
	days := func(d time.Duration) float64 { return d.Hours() / 24 }
	steady := days(ret.Raw)*perDay(byRes[0]) + (days(ret.Minute)-days(ret.Raw))*perDay(byRes[1]) +
		(days(ret.TenMinutes)-days(ret.Minute))*perDay(byRes[2]) + float64(symbols) + perDay(tens)
	fmt.Printf("per target per day of blocks and packs, with the hourly rollups: %s at 10 s, %s in 1-minute windows, %s in 10-minute windows\n", mb(perDay(byRes[0])), mb(perDay(byRes[1])), mb(perDay(byRes[2])))
	fmt.Printf("one target under the default retention (%.0f d raw, to %.0f d 1-min, to %.0f d 10-min), once full: %s (symbols counted once, as replayed; a day of ten-minute rollups)\n",
		days(ret.Raw), days(ret.Minute), days(ret.TenMinutes), mb(steady))
	fmt.Printf("%d such targets fit the default %d GiB budget\n", int(math.Floor(float64(ret.Budget)/steady)), ret.Budget>>30)
	st.Close()
	if fi, err := os.Stat(path); err == nil {
		fmt.Printf("the SQLite file after compaction and collection: %s (pages, indexes and free space included)\n", mb(float64(fi.Size())))
	}
	if err := novelty(dir); err != nil {
		return err
	}
	return liveSymbols(ctx, dir)
}

// liveSymbols stores the recorded rounds as they were recorded, every
// type, and reports the symbols they take as the rounds go: what a live
// service's new stacks cost, which a replay cannot show.
func liveSymbols(ctx context.Context, dir string) error {
	st, path, err := tempStore(ctx)
	if err != nil {
		return err
	}
	defer os.RemoveAll(filepath.Dir(path))
	defer st.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	recorded := map[string][]*profile.Profile{}
	rounds := 0
	for _, typ := range sim.Types {
		if recorded[typ], err = sim.Recorded(dir, typ); err != nil {
			return err
		}
		if rounds == 0 || len(recorded[typ]) < rounds {
			rounds = len(recorded[typ])
		}
	}
	target := profseries.NewLabels(map[string]string{"job": "leftpad", "instance": "10.0.0.1:6060"})
	// The stacks of samples, counted apart from the callers stored with
	// them.
	d, seen := profseries.NewDictionary(), map[uint64]bool{}
	var sizes, counts []int64
	var xs, ys []float64
	var tables [6][2]int64 // per symbol table: bytes at the last third, then at the end
	for i := range rounds {
		at := epoch.Add(time.Duration(i) * 10 * time.Second)
		for _, typ := range sim.Types {
			end := at.Add(10 * time.Second)
			if typ == profseries.Heap || typ == profseries.Goroutine {
				end = at
			}
			sc := &profseries.Scrape{Target: target, Type: typ, Start: at, End: end, Profile: recorded[typ][i],
				Process: profseries.Process{BuildID: "leftpad", Generation: 1}}
			if err := st.Append(ctx, sc); err != nil {
				return err
			}
			_, samples, err := profseries.Intern(recorded[typ][i], d)
			if err != nil {
				return err
			}
			for _, s := range samples {
				seen[s.Stack] = true
			}
		}
		b, err := symbolBytes(db)
		if err != nil {
			return err
		}
		n := int64(len(seen))
		sizes, counts = append(sizes, b), append(counts, n)
		if i == rounds-1-rounds/3 || i == rounds-1 {
			if tables, err = tableBytes(db, tables); err != nil {
				return err
			}
		}
		xs, ys = append(xs, math.Log(float64(i+1))), append(ys, math.Log(float64(n)))
	}
	if err := packRecorded(ctx, st, db, recorded, epoch.Add(time.Duration(rounds)*10*time.Second)); err != nil {
		return err
	}
	stacks := counts[rounds-1]
	last := rounds / 3
	if rounds < 3 || last < 1 {
		return nil
	}
	perRound := float64(sizes[rounds-1]-sizes[rounds-1-last]) / float64(last)
	var rows, callers int64
	if err := db.QueryRow(`SELECT (SELECT COUNT(*) FROM prof_stacks), (SELECT COUNT(*) FROM prof_callers)`).Scan(&rows, &callers); err != nil {
		return err
	}
	fmt.Printf("\nthe %d recorded rounds stored as recorded: %s of symbols for %d stacks of samples (%.0f bytes a stack, locations and functions included; %d rows of stacks, label sets included, and %d callers);\n",
		rounds, mb(float64(sizes[rounds-1])), stacks, float64(sizes[rounds-1])/float64(stacks), rows, callers)
	for k, t := range symbolTables {
		fmt.Printf("  %-15s %s, of which the last %d rounds %s\n", t, mb(float64(tables[k][1])), last, mb(float64(tables[k][1]-tables[k][0])))
	}
	fmt.Printf("the last %d rounds added %.0f bytes a round: %s a day if a live service kept that rate (an upper bound: new stacks come ever more slowly)\n",
		last, perRound, mb(perRound*8640))
	perStack := float64(sizes[rounds-1]-sizes[rounds-1-last]) / float64(max(1, counts[rounds-1]-counts[rounds-1-last]))
	a, b := fit(xs, ys)
	day := math.Exp(a) * math.Pow(8640, b)
	fmt.Printf("a new stack took %.0f bytes in those rounds; stacks fit %.0f·n^%.2f, %.0f after a day: about %s of symbols a day\n",
		perStack, math.Exp(a), b, day, mb(float64(sizes[rounds-1])+(day-float64(stacks))*perStack))
	return nil
}

// packRecorded reports what the blocks of the rounds stored as recorded
// take apart and packed: the packs' gain without a replay's repetitions.
func packRecorded(ctx context.Context, st *store.DB, db *sql.DB, recorded map[string][]*profile.Profile, end time.Time) error {
	apart := map[string]int64{}
	for _, typ := range sim.Types {
		var err error
		if apart[typ], err = typeBytes(db, `prof_blocks`, typ, `resolution = 0`); err != nil {
			return err
		}
	}
	if _, err := st.ApplyRetention(ctx, end.Truncate(time.Hour).Add(2*time.Hour)); err != nil {
		return err
	}
	fmt.Printf("\nthe recorded rounds' blocks as recorded (no replay), apart and packed:\n")
	var rows, a, p int64
	for _, typ := range sim.Types {
		packed, err := packedBytes(db, typ)
		if err != nil {
			return err
		}
		var n int64
		for _, pr := range recorded[typ] {
			n += int64(len(pr.Sample))
		}
		fmt.Printf("  %-10s %8d rows  apart %8d bytes (%.2f B/row)  packed %8d (%.2f B/row)\n", typ, n, apart[typ], float64(apart[typ])/float64(n), packed, float64(packed)/float64(n))
		rows, a, p = rows+n, a+apart[typ], p+packed
	}
	fmt.Printf("  %-10s %8d rows  apart %8d bytes (%.2f B/row)  packed %8d (%.2f B/row)\n", "all", rows, a, float64(a)/float64(rows), p, float64(p)/float64(rows))
	return nil
}

// tempStore opens a new SQLite store in a directory of its own, which
// the caller removes.
// packedBytes is what the scrapes of the series of type typ take: their
// blocks (references, once packed) and their packs.
func packedBytes(db *sql.DB, typ string) (int64, error) {
	refs, err := typeBytes(db, `prof_blocks`, typ, `resolution = 0`)
	if err != nil {
		return 0, err
	}
	packs, err := typeBytes(db, `prof_packs`, typ, `resolution = 0`)
	return refs + packs, err
}

// typeBytes is the bytes of data in table's rows of the series of type
// typ that meet where.
func typeBytes(db *sql.DB, table, typ, where string) (int64, error) {
	var n int64
	err := db.QueryRow(`SELECT COALESCE(SUM(LENGTH(b.data)), 0) FROM `+table+` b JOIN prof_series s ON s.id = b.series_id WHERE s.type = ? AND `+where, typ).Scan(&n)
	return n, err
}

func tempStore(ctx context.Context) (*store.DB, string, error) {
	tmp, err := os.MkdirTemp("", "size")
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(tmp, "size.db")
	st, err := store.Open(ctx, path)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, "", err
	}
	return st, path, nil
}

var symbolTables = []string{"prof_functions", "prof_mappings", "prof_locations", "prof_callers", "prof_stacks", "prof_shapes"}

// tableBytes shifts each symbol table's bytes in tables and adds its
// bytes now.
func tableBytes(db *sql.DB, tables [6][2]int64) ([6][2]int64, error) {
	for k, t := range symbolTables {
		var n int64
		if err := db.QueryRow(`SELECT COALESCE(SUM(LENGTH(data)), 0) FROM ` + t).Scan(&n); err != nil {
			return tables, err
		}
		tables[k] = [2]int64{tables[k][1], n}
	}
	return tables, nil
}

func symbolBytes(db *sql.DB) (int64, error) {
	var total int64
	for _, t := range symbolTables {
		var n int64
		if err := db.QueryRow(`SELECT COALESCE(SUM(LENGTH(data)), 0) FROM ` + t).Scan(&n); err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// novelty reports how the recorded scrapes' distinct stacks grow, round
// after round, and what a power law fitted to it says of a day: the
// symbols a replay cannot show.
func novelty(dir string) error {
	fmt.Printf("\ndistinct stacks as the recorded rounds accumulate (a replay repeats them; a live service keeps adding):\n")
	for _, typ := range sim.Types {
		ps, err := sim.Recorded(dir, typ)
		if err != nil {
			return err
		}
		d := profseries.NewDictionary()
		seen := map[uint64]bool{}
		var xs, ys []float64
		var line string
		for i, p := range ps {
			_, samples, err := profseries.Intern(p, d)
			if err != nil {
				return err
			}
			for _, s := range samples {
				seen[s.Stack] = true
			}
			n := len(seen)
			xs, ys = append(xs, math.Log(float64(i+1))), append(ys, math.Log(float64(n)))
			if i < 6 || i == len(ps)-1 {
				line += fmt.Sprintf(" %d", n)
			} else if i == 6 {
				line += " ..."
			}
		}
		fmt.Printf("  %-10s %d rounds:%s", typ, len(ps), line)
		if len(ps) >= 3 {
			a, b := fit(xs, ys)
			fmt.Printf("; fit %.0f·n^%.2f: %.0f stacks after a day (8640 rounds)", math.Exp(a), b, math.Exp(a)*math.Pow(8640, b))
		}
		fmt.Println()
	}
	return nil
}

// fit is the least-squares line y = a + b·x.
func fit(xs, ys []float64) (a, b float64) {
	var sx, sy, sxx, sxy float64
	n := float64(len(xs))
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	b = (n*sxy - sx*sy) / (n*sxx - sx*sx)
	return (sy - b*sx) / n, b
}

func mb(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.2f MiB", b/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", b/(1<<10))
}
