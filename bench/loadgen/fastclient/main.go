// Command fastclient is a closed-loop load generator built on fasthttp's
// HostClient, kept as the measured alternative to loadgen's own HTTP/1.1
// client: bench/loadgen/run.sh runs it beside wrk, hey and perfscope so the
// choice between the two clients stays backed by numbers.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

func main() {
	conns := flag.Int("c", 8, "connections")
	dur := flag.Duration("d", 5*time.Second, "duration")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: fastclient [-c N] [-d D] URL")
		os.Exit(2)
	}
	u, err := url.Parse(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fastclient:", err)
		os.Exit(2)
	}
	hc := &fasthttp.HostClient{Addr: u.Host, MaxConns: *conns}
	var ok, failed atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	start := time.Now()
	for range *conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			req.SetRequestURI(flag.Arg(0))
			for !stop.Load() {
				if err := hc.Do(req, resp); err != nil || resp.StatusCode() != 200 {
					failed.Add(1)
					continue
				}
				ok.Add(1)
			}
		}()
	}
	time.Sleep(*dur)
	stop.Store(true)
	wg.Wait()
	el := time.Since(start).Seconds()
	n := ok.Load() + failed.Load()
	fmt.Printf("requests %d failed %d seconds %.3f rps %.1f\n", n, failed.Load(), el, float64(n)/el)
}
