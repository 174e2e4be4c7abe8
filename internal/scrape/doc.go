// Package scrape collects profiles of live Go services continuously: it
// reads a Prometheus-style configuration of targets (listed, or
// discovered from files that it watches), scrapes each target's pprof
// endpoints on a schedule of its own, and hands every profile to a Sink
// (the profile-series store) with the target's labels and the process it
// came from. It is opinionated on two points: a target's trouble — down,
// refusing, answering garbage or a bomb — stays that target's, shown in
// its health, and never delays the others; and a profile is only ever
// subtracted from another of the same process, so a restart is never a
// negative delta nor two processes mixed silently.
//
// # Schedule
//
// Each target's scrapes are due at offset + k × interval from the Unix
// epoch, where the offset is the target's hash (of its label set) modulo
// the interval: targets spread over the interval, and every scraper and
// every restart agrees on a target's times. One scrape of a target runs
// at a time. A scrape takes its snapshots at once, then its profiles over
// a window side by side: the CPU profile (profile?seconds=) and the
// deltas the target makes (allocs?seconds=), each one window long, the
// interval in whole seconds. A CPU profile ends a moment after its window
// and the next cannot start before (a process runs one CPU profiler), so
// scrapes drift late by that moment each time; once a scrape starts a
// second or more late, its window is shortened by those whole seconds so
// it ends by the next due time. Windows then follow one another with no
// gap and the lateness stays under a second plus one answer's time.
// Health records each scrape's lateness and the most seen; a scrape that
// could not start before the next one was due is counted missed, never
// run in a burst.
//
// Requests are bounded apart: those that wait out a window hold a
// connection for the interval and cost nothing meanwhile
// (Options.MaxWindowed), snapshots answer at once and cost parsing
// (Options.MaxQuick). Every answer is read through fetch's bounded
// reader (Options.Limits) within the job's scrape_timeout, on top of the
// window for windowed requests.
//
// # Storing
//
// A target's scrape never waits for the Sink: its profiles go into one
// bounded queue (Options.MaxQueued) that a few writers hand to the Sink
// side by side, so the store can commit many scrapes at once. Snapshots
// are queued as soon as they are taken, the profiles over the window
// when it ends. When the queue is full the store is behind: the profile
// is dropped, counted in Health.Dropped and said in LastError ("not
// stored: the store is behind"), and the next scrape starts on time
// anyway. Why the Sink refused a profile shows with the next scrape's
// errors. Run stores what was queued before it returns.
//
// # Deltas and restarts
//
// allocs, mutex and block are counted since the process started; they
// are stored as deltas over each window. The first scrape asks the
// target for a delta (?seconds=); a target that makes none (an older Go,
// another server) answers with an error or a cumulative profile, and
// from then on the scraper subtracts consecutive snapshots
// (fetch.DeltaBetween) instead, the first snapshot being the baseline.
// Deltas keep only the counted values (alloc_*, contentions, delay): the
// in-use values of the allocs profile go down as well as up.
//
// heap is stored as a snapshot of what is in use (inuse_objects,
// inuse_space) at the instant it was taken: the allocations it also
// carries are the allocs type's, and in-use memory is a level, not a
// flow, so a delta of it means nothing over a merged range. goroutine
// and goroutineleak are snapshots too. goroutineleak is asked once: a
// target whose Go does not make it (404) has it marked unsupported.
//
// A restart is seen by a counter that goes back — in the restart clock,
// a snapshot of cumulative counters taken every scrape of a target that
// collects any cumulative type (its heap snapshot, else its allocs one),
// or in any subtracted type — or by the main binary's build id changing
// in any profile. After a restart the process's generation
// (profseries.Process.Generation) grows by one, the next snapshots are
// baselines, and what the target serves is asked again.
//
// # Request counts
//
// A target whose application runs behind perfscope's expose middleware
// counts its requests, and serves the counts in the metrics snapshot
// beside its pprof endpoints (/debug/metrics). Each scrape that takes a
// CPU profile reads them once, right after the window, and hands the
// requests served since the last read with the CPU scrape
// (profseries.Scrape.Requests), so that CPU per request can be judged.
// They are subtracted as the profiles' deltas are: the first read is a
// baseline; counts that go back (a restart) or a route gone make the read
// a new baseline, never a negative count; after a restart the counts
// start over; a last read more than half a window from the window's start
// (a scrape missed between) stands for no window. The counts carry the
// time between their two reads, which differs from the window's length by
// the moments answers take, so that rates compare exactly. A target that serves no
// counts (404, or a snapshot without them) is asked again only after a
// restart, and its scrapes have none: unknown, not zero.
//
// # Health and backoff
//
// Each target's health (Scraper.Targets) says whether its last scrape
// collected anything (Up), why it missed each profile (one line per
// type, fetch.Reason: "401 Unauthorized", "got an HTML page, not a
// profile", "profile too large: ..."), when it last succeeded, how long
// scrapes take and how late they start, and the counts of scrapes,
// failures and missed scrapes. After n scrapes in a row that collected
// nothing the next waits interval × 2^(n-1), capped at
// Options.MaxBackoff, then resumes on its due times.
//
// # Sharding
//
// Several scrapers split the targets with Options.Shard (i/n): each
// keeps the targets whose Target.Hash modulo n is i, so n scrapers of
// one configuration scrape every target exactly once.
package scrape
