package fetch

import "errors"

// counts are what a profile's protobuf holds, counted without parsing it
// into memory.
type counts struct {
	samples, frames, values int64 // sample rows; location ids and values over all rows
	labelled, labels        int64 // rows with labels; labels over all rows
	locations, lines        int64
	functions, mappings     int64
	strings, stringBytes    int64
	other                   int64 // sample types, comments
}

// Bytes of memory per item of a parsed profile (github.com/google/pprof
// /profile on a 64-bit machine), counting every allocation parsing makes:
// slices grown by append allocate about five times their final size in
// all. TestEstimateBoundsParse holds them above what parsing allocates
// for profiles made of nothing but each item, so an estimate also bounds
// the garbage a parse leaves.
const (
	memPerSample        = 160
	memPerFrame         = 32
	memPerValue         = 24
	memPerLabelled      = 800 // three maps made for a row's labels
	memPerLabel         = 480
	memPerLocation      = 160
	memPerLine          = 224
	memPerFunction      = 200
	memPerMapping       = 280
	memPerString        = 96
	memPerOther         = 136
	memPerDataByte      = 2 // the inflated bytes, held while parsing, and their copy in strings
	legacyMemoryPerByte = 64
)

func (c counts) memory(inflated int64) int64 {
	return c.samples*memPerSample + c.frames*memPerFrame + c.values*memPerValue +
		c.labelled*memPerLabelled + c.labels*memPerLabel +
		c.locations*memPerLocation + c.lines*memPerLine +
		c.functions*memPerFunction + c.mappings*memPerMapping +
		c.strings*memPerString + c.stringBytes + c.other*memPerOther +
		inflated*memPerDataByte
}

var errWire = errors.New("not a protobuf profile")

// Wire types of the protobuf encoding.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// A field is one field of a protobuf message.
type field struct {
	num  uint64
	wire int
	data []byte // the bytes of a wireBytes field
}

// nextField reads the field at the start of b, returning the rest.
func nextField(b []byte) (field, []byte, error) {
	key, n := uvarint(b)
	if n <= 0 {
		return field{}, nil, errWire
	}
	b = b[n:]
	f := field{num: key >> 3, wire: int(key & 7)}
	if f.num == 0 {
		return field{}, nil, errWire
	}
	switch f.wire {
	case wireVarint:
		_, n := uvarint(b)
		if n <= 0 {
			return field{}, nil, errWire
		}
		return f, b[n:], nil
	case wireFixed64:
		if len(b) < 8 {
			return field{}, nil, errWire
		}
		return f, b[8:], nil
	case wireFixed32:
		if len(b) < 4 {
			return field{}, nil, errWire
		}
		return f, b[4:], nil
	case wireBytes:
		l, n := uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return field{}, nil, errWire
		}
		f.data = b[n : n+int(l)]
		return f, b[n+int(l):], nil
	}
	return field{}, nil, errWire
}

// uvarint decodes a varint, returning its length, or 0 when b ends
// inside it or it overflows.
func uvarint(b []byte) (uint64, int) {
	var x uint64
	var s uint
	for i, c := range b {
		if i == 10 {
			return 0, 0
		}
		if c < 0x80 {
			return x | uint64(c)<<s, i + 1
		}
		x |= uint64(c&0x7f) << s
		s += 7
	}
	return 0, 0
}

// repeated counts the items of a repeated scalar field: one when it came
// unpacked, the varints of its bytes when packed.
func repeated(f field) int64 {
	if f.wire != wireBytes {
		return 1
	}
	n := int64(len(f.data))
	for _, c := range f.data {
		if c >= 0x80 {
			n--
		}
	}
	return n
}

// countProfile counts a protobuf profile's items (profile.proto).
func countProfile(b []byte) (counts, error) {
	var c counts
	if len(b) == 0 {
		return c, errWire
	}
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return c, err
		}
		b = rest
		switch f.num {
		case 1, 13: // sample_type, comment
			c.other++
		case 2: // sample
			if f.wire != wireBytes {
				return c, errWire
			}
			if err := countSample(f.data, &c); err != nil {
				return c, err
			}
		case 3: // mapping
			c.mappings++
		case 4: // location
			if f.wire != wireBytes {
				return c, errWire
			}
			c.locations++
			if err := forEach(f.data, func(f field) {
				if f.num == 4 { // line
					c.lines++
				}
			}); err != nil {
				return c, err
			}
		case 5: // function
			c.functions++
		case 6: // string_table
			c.strings++
			c.stringBytes += int64(len(f.data))
		}
	}
	return c, nil
}

func countSample(b []byte, c *counts) error {
	c.samples++
	var labels int64
	err := forEach(b, func(f field) {
		switch f.num {
		case 1: // location_id
			c.frames += repeated(f)
		case 2: // value
			c.values += repeated(f)
		case 3: // label
			labels++
		}
	})
	if labels > 0 {
		c.labelled++
		c.labels += labels
	}
	return err
}

// forEach calls fn on each field of the message b.
func forEach(b []byte, fn func(field)) error {
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		fn(f)
		b = rest
	}
	return nil
}
