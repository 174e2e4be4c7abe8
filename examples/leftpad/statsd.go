package leftpad

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
)

// metricKind is a StatsD metric type.
type metricKind byte

const (
	counter metricKind = 'c' // sent as name:value|c
	timing  metricKind = 't' // value in microseconds, sent as name:ms|ms
)

// A metric is one StatsD measurement.
type metric struct {
	name  string
	kind  metricKind
	value int64 // the count, or the duration in microseconds
}

// statsd sends metrics to a StatsD server over UDP. Sending is fire and
// forget, as StatsD intends: a lost packet or a server that is not running
// costs a metric, never a request.
type statsd struct {
	mode   mode
	conn   net.Conn // nil when disabled
	prefix string
	// replacer makes metric names safe (':', '|', '@' and whitespace
	// would break the line format); optimized mode builds it once.
	replacer *strings.Replacer
	bufs     sync.Pool
}

// metricNameReplacements are the strings.NewReplacer arguments for metric
// names.
func metricNameReplacements() []string {
	return []string{":", "_", "|", "_", "@", "_", " ", "_", "\n", "_"}
}

// newStatsd connects a UDP socket to addr; an empty addr disables sending.
func newStatsd(addr, prefix string, m mode) (*statsd, error) {
	c := &statsd{mode: m, prefix: prefix, replacer: strings.NewReplacer(metricNameReplacements()...)}
	if addr == "" {
		return c, nil
	}
	conn, err := net.Dial("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("statsd at %s: %w", addr, err)
	}
	c.conn = conn
	return c, nil
}

// send formats metrics as StatsD lines and sends them. Naive mode sends one
// packet per metric, each line made by fmt.Sprintf with a freshly built
// replacer; optimized mode appends all lines to one pooled buffer with
// strconv and sends a single packet, which StatsD reads as one line per
// metric.
func (c *statsd) send(metrics []metric) {
	if c.conn == nil {
		return
	}
	if c.mode == naive {
		for _, m := range metrics {
			replacer := strings.NewReplacer(metricNameReplacements()...)
			name := replacer.Replace(c.prefix + "." + m.name)
			var line string
			if m.kind == timing {
				line = fmt.Sprintf("%s:%.3f|ms", name, float64(m.value)/1000)
			} else {
				line = fmt.Sprintf("%s:%d|c", name, m.value)
			}
			// Errors are ignored: see the type's comment.
			c.conn.Write([]byte(line))
		}
		return
	}
	bp, _ := c.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b := (*bp)[:0]
	for i, m := range metrics {
		if i > 0 {
			b = append(b, '\n')
		}
		b = c.appendLine(b, m)
	}
	c.conn.Write(b)
	*bp = b
	c.bufs.Put(bp)
}

// appendLine appends one metric's StatsD line, without a newline.
func (c *statsd) appendLine(b []byte, m metric) []byte {
	// The replacer returns its input unchanged, without allocating, when
	// there is nothing to replace, which is the usual case.
	b = append(b, c.replacer.Replace(c.prefix)...)
	b = append(b, '.')
	b = append(b, c.replacer.Replace(m.name)...)
	b = append(b, ':')
	if m.kind == timing {
		b = strconv.AppendFloat(b, float64(m.value)/1000, 'f', 3, 64)
		return append(b, "|ms"...)
	}
	b = strconv.AppendInt(b, m.value, 10)
	return append(b, "|c"...)
}

// Close closes the socket.
func (c *statsd) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}
