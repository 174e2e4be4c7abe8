package profseries

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/google/pprof/profile"
)

// A Kind is a kind of interned item: what a symbol table keeps once.
type Kind int

// The kinds of interned items. Each refers only to kinds before it in
// Kinds (and a stack to another, its label set), by the ids a
// SymbolTable gave them, so an item's content, and
// with it its hash, is the same in every scrape that has it. (A kind's
// number is part of its items' hashes: new kinds are added at the end.)
const (
	KindFunction Kind = iota
	KindMapping
	KindLocation
	KindStack
	KindShape
	KindCaller
)

// Kinds lists every kind, parents first.
var Kinds = []Kind{KindFunction, KindMapping, KindLocation, KindCaller, KindStack, KindShape}

func (k Kind) String() string {
	switch k {
	case KindFunction:
		return "function"
	case KindMapping:
		return "mapping"
	case KindLocation:
		return "location"
	case KindStack:
		return "stack"
	case KindShape:
		return "shape"
	case KindCaller:
		return "caller"
	}
	return "unknown kind"
}

// Hash is the content hash an item is interned by: the first 8 bytes of
// the SHA-256 of its kind and content. A table keeps the content beside
// the hash and compares it on a hit, so a collision is an error, never
// two items taken for one.
func Hash(k Kind, content []byte) uint64 {
	h := sha256.New()
	h.Write([]byte{byte(k)})
	h.Write(content)
	var sum [sha256.Size]byte
	return binary.BigEndian.Uint64(h.Sum(sum[:0]))
}

// A SymbolTable interns items: it returns the id of content, the same id
// for the same content every time, adding it on first sight. Ids are
// positive and small (a table numbers items densely), which keeps the
// blocks that refer to them small.
type SymbolTable interface {
	Intern(k Kind, hash uint64, content []byte) (uint64, error)
}

// A SymbolSource returns the content of interned items by id. Ids it does
// not know are missing from the map.
type SymbolSource interface {
	Lookup(k Kind, ids []uint64) (map[uint64][]byte, error)
}

// A Shape is what a profile says besides its samples and symbols: the
// sample types and the header fields pprof keeps. Scrapes of one type of
// one program share one shape, so it is interned too.
type Shape struct {
	SampleTypes       []ValueType
	PeriodType        ValueType
	Period            int64
	DefaultSampleType string
	DropFrames        string
	KeepFrames        string
	DocURL            string
	Comments          []string
}

// A ValueType is a sample type or period type: its name and unit.
type ValueType struct{ Type, Unit string }

// Compatible says whether samples of s and o can be added: the same
// sample types and period type, as pprof's Merge requires.
func (s Shape) Compatible(o Shape) bool {
	return slices.Equal(s.SampleTypes, o.SampleTypes) && s.PeriodType == o.PeriodType
}

func shapeOf(p *profile.Profile) Shape {
	s := Shape{
		Period: p.Period, DefaultSampleType: p.DefaultSampleType, DropFrames: p.DropFrames,
		KeepFrames: p.KeepFrames, DocURL: p.DocURL, Comments: slices.Clone(p.Comments),
	}
	for _, st := range p.SampleType {
		s.SampleTypes = append(s.SampleTypes, ValueType{st.Type, st.Unit})
	}
	if p.PeriodType != nil {
		s.PeriodType = ValueType{p.PeriodType.Type, p.PeriodType.Unit}
	}
	return s
}

func (s Shape) encode() []byte {
	var w writer
	w.uvarint(uint64(len(s.SampleTypes)))
	for _, st := range s.SampleTypes {
		w.str(st.Type)
		w.str(st.Unit)
	}
	w.str(s.PeriodType.Type)
	w.str(s.PeriodType.Unit)
	w.varint(s.Period)
	w.str(s.DefaultSampleType)
	w.str(s.DropFrames)
	w.str(s.KeepFrames)
	w.str(s.DocURL)
	w.strs(s.Comments)
	return w.b
}

// DecodeShape reads a shape's interned content.
func DecodeShape(b []byte) (Shape, error) {
	r := reader{b: b}
	var s Shape
	n := r.count()
	for range n {
		s.SampleTypes = append(s.SampleTypes, ValueType{r.str(), r.str()})
	}
	s.PeriodType = ValueType{r.str(), r.str()}
	s.Period = r.varint()
	s.DefaultSampleType = r.str()
	s.DropFrames = r.str()
	s.KeepFrames = r.str()
	s.DocURL = r.str()
	s.Comments = r.strs()
	return s, r.done("shape")
}

// functionContent is a function's interned content: its name, system
// name, file and start line. Where the system name is the name, as the
// Go runtime writes every function, it is not written twice: the content
// begins with secondForm (which a length written in its shortest form
// never is, so content written before, which always has the system
// name, still reads) and leaves it out.
func functionContent(f *profile.Function) []byte {
	var w writer
	if f.SystemName == f.Name {
		w.b = append(w.b, secondForm[:]...)
		w.str(f.Name)
	} else {
		w.str(f.Name)
		w.str(f.SystemName)
	}
	w.str(f.Filename)
	w.varint(f.StartLine)
	return w.b
}

func decodeFunction(id uint64, b []byte) (*profile.Function, error) {
	r := reader{b: b}
	f := &profile.Function{ID: id}
	if len(b) >= 2 && [2]byte(b[:2]) == secondForm {
		r.b = r.b[2:]
		f.Name = r.str()
		f.SystemName = f.Name
	} else {
		f.Name, f.SystemName = r.str(), r.str()
	}
	f.Filename, f.StartLine = r.str(), r.varint()
	return f, r.done("function")
}

// mappingContent is a mapping's interned content: its size, offset, file
// and build id. Where it was loaded (Start) is left out, and locations
// keep addresses relative to it, so a library loaded elsewhere after a
// restart (address space randomization) is the same mapping with the same
// locations, as pprof's Merge takes it. The Has* flags are left out too:
// the runtime sets them per profile (one scrape [FN][FL][LN][IN], the next
// [FN]); a rebuilt profile derives them from the symbols it has.
func mappingContent(m *profile.Mapping) []byte {
	var w writer
	w.uvarint(m.Limit - m.Start)
	w.uvarint(m.Offset)
	w.str(m.File)
	w.str(m.BuildID)
	w.str(m.KernelRelocationSymbol)
	return w.b
}

// decodeMapping returns the mapping of content b, loaded at address 0.
func decodeMapping(id uint64, b []byte) (*profile.Mapping, error) {
	r := reader{b: b}
	m := &profile.Mapping{ID: id, Limit: r.uvarint(), Offset: r.uvarint(), File: r.str(), BuildID: r.str(), KernelRelocationSymbol: r.str()}
	return m, r.done("mapping")
}

// location is a location's interned content: ids in place of pointers.
type location struct {
	mapping uint64 // 0: none
	address uint64
	folded  bool
	lines   []line
}

type line struct {
	function     uint64 // 0: none
	line, column int64
}

func (l location) encode() []byte {
	var w writer
	w.uvarint(l.mapping)
	w.uvarint(l.address)
	if l.folded {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
	w.uvarint(uint64(len(l.lines)))
	for _, ln := range l.lines {
		w.uvarint(ln.function)
		w.varint(ln.line)
		w.varint(ln.column)
	}
	return w.b
}

func decodeLocation(b []byte) (location, error) {
	r := reader{b: b}
	l := location{mapping: r.uvarint(), address: r.uvarint(), folded: r.byte() != 0}
	n := r.count()
	for range n {
		l.lines = append(l.lines, line{function: r.uvarint(), line: r.varint(), column: r.varint()})
	}
	return l, r.done("location")
}

// stack is a stack resolved: its locations, leaf first, and the sample's
// labels, which pprof keys samples by as much as by locations.
type stack struct {
	locations []uint64
	labels    map[string][]string
	numLabels map[string][]int64
	numUnits  map[string][]string
}

// A stack's interned content has one of two forms. The first lists its
// locations whole, then its labels. The second, written since, names its
// callers (a caller, see KindCaller: the same locations less the leaf; 0
// for a stack of one location), its leaf location, and, if it has labels,
// the id of a stack of the first form without locations that has them (a
// label set, interned once however many stacks have it). So a stack that
// shares all but its leaf with a known one, and its labels with another,
// costs a few bytes, and the ids of the stacks blocks name stay dense.
// The second form begins with secondForm, which the first never does:
// its count of locations is a varint in its shortest form, and 0x80 0x00
// is not one.
//
// A caller's content is the id of its own caller (0: none) and its leaf
// location: callers form a tree of the locations stacks share.
var secondForm = [2]byte{0x80, 0x00}

// maxStackDepth bounds how many locations a stack decodes to: deeper,
// and the stored tree is corrupt (or loops).
const maxStackDepth = 1 << 12

// encode writes s in the first form: a label set, or a stack of no
// locations, which has no node.
func (s stack) encode() []byte {
	var w writer
	w.uvarint(uint64(len(s.locations)))
	for _, l := range s.locations {
		w.uvarint(l)
	}
	s.encodeLabels(&w)
	return w.b
}

func (s stack) hasLabels() bool { return len(s.labels) > 0 || len(s.numLabels) > 0 }

// encodeNode writes a stack in the second form: its caller, its leaf,
// and its label set (0: none).
func encodeNode(caller, leaf, labels uint64) []byte {
	w := writer{b: append(make([]byte, 0, 16), secondForm[:]...)}
	w.uvarint(caller)
	w.uvarint(leaf)
	if labels != 0 {
		w.uvarint(labels)
	}
	return w.b
}

func (s stack) encodeLabels(w *writer) {
	keys := sortedKeys(s.labels)
	w.uvarint(uint64(len(keys)))
	for _, k := range keys {
		w.str(k)
		w.strs(s.labels[k])
	}
	keys = sortedKeys(s.numLabels)
	w.uvarint(uint64(len(keys)))
	for _, k := range keys {
		w.str(k)
		vs := s.numLabels[k]
		w.uvarint(uint64(len(vs)))
		for _, v := range vs {
			w.varint(v)
		}
		w.strs(s.numUnits[k])
	}
}

// storedStack is a stack's content decoded: a stack listed whole, or a
// node, whose stack has its leaf alone and no labels.
type storedStack struct {
	stack
	node             bool
	caller, labelSet uint64 // of a node; 0: none
}

func encodeCaller(caller, leaf uint64) []byte {
	var w writer
	w.uvarint(caller)
	w.uvarint(leaf)
	return w.b
}

// CallerRefs returns what a caller's interned content refers to: its own
// caller (0: none) and its leaf location.
func CallerRefs(content []byte) (caller, leaf uint64, err error) {
	r := reader{b: content}
	caller, leaf = r.uvarint(), r.uvarint()
	return caller, leaf, r.done("caller")
}

// decodeStack reads a stack's content in either form.
func decodeStack(b []byte) (storedStack, error) {
	r := reader{b: b}
	var s storedStack
	if len(b) >= 2 && [2]byte(b[:2]) == secondForm {
		r.b = r.b[2:]
		s.node = true
		s.caller = r.uvarint()
		s.locations = []uint64{r.uvarint()}
		if len(r.b) > 0 {
			if s.labelSet = r.uvarint(); s.labelSet == 0 {
				r.fail()
			}
		}
		return s, r.done("stack")
	}
	n := r.count()
	s.locations = make([]uint64, 0, n)
	for range n {
		s.locations = append(s.locations, r.uvarint())
	}
	r.labels(&s.stack)
	return s, r.done("stack")
}

func (r *reader) labels(s *stack) {
	if n := r.count(); n > 0 {
		s.labels = make(map[string][]string, n)
		for range n {
			k := r.str()
			s.labels[k] = r.strs()
		}
	}
	if n := r.count(); n > 0 {
		s.numLabels = make(map[string][]int64, n)
		for range n {
			k := r.str()
			m := r.count()
			vs := make([]int64, 0, m)
			for range m {
				vs = append(vs, r.varint())
			}
			s.numLabels[k] = vs
			if units := r.strs(); len(units) > 0 {
				if s.numUnits == nil {
					s.numUnits = make(map[string][]string)
				}
				s.numUnits[k] = units
			}
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// writer appends the varints and strings of interned content and blocks.
type writer struct{ b []byte }

func (w *writer) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *writer) varint(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *writer) str(s string)     { w.uvarint(uint64(len(s))); w.b = append(w.b, s...) }
func (w *writer) strs(ss []string) {
	w.uvarint(uint64(len(ss)))
	for _, s := range ss {
		w.str(s)
	}
}

// errCorrupt is what reading content or a block that does not decode
// returns, wrapped with what was read.
var errCorrupt = errors.New("corrupt profile series data")

// reader reads what writer wrote. The first error sticks; later reads
// return zero values, and done reports it.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = errCorrupt
	}
	r.b = nil
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a length, bounded by the bytes left (every counted item
// takes at least one), so corrupt data cannot make a huge allocation.
func (r *reader) count() int {
	v := r.uvarint()
	if v > uint64(len(r.b)) {
		r.fail()
		return 0
	}
	return int(v)
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) str() string {
	n := r.count()
	if r.err != nil {
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) strs() []string {
	n := r.count()
	if n == 0 {
		return nil
	}
	ss := make([]string, 0, n)
	for range n {
		ss = append(ss, r.str())
	}
	return ss
}

func (r *reader) done(what string) error {
	if r.err == nil && len(r.b) > 0 {
		r.err = errCorrupt
	}
	if r.err != nil {
		return fmt.Errorf("%s: %w", what, r.err)
	}
	return nil
}

// StackRefs returns what a stack's interned content refers to: its
// label set (0: none), its caller (0: none), and the locations it names
// itself (all of them for a stack listed whole, the leaf for a node). A
// store keeps them while the stack is kept.
func StackRefs(content []byte) (labelSet, caller uint64, locations []uint64, err error) {
	s, err := decodeStack(content)
	return s.labelSet, s.caller, s.locations, err
}

// LocationRefs returns the function and mapping ids of a location's
// interned content.
func LocationRefs(content []byte) (functions, mappings []uint64, err error) {
	l, err := decodeLocation(content)
	if l.mapping != 0 {
		mappings = append(mappings, l.mapping)
	}
	for _, ln := range l.lines {
		if ln.function != 0 {
			functions = append(functions, ln.function)
		}
	}
	return functions, mappings, err
}
