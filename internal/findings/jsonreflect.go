package findings

import (
	"strings"

	"github.com/perfscope/perfscope/internal/profiles"
)

// Thresholds of the json-reflect rule, for the encoding/json work one
// function starts.
const (
	jsonCPU     = 0.10
	jsonObjects = 0.20
)

// jsonInterfaceFuncs decode into interface values: map[string]any and
// []any, the slowest and most allocating way to decode.
var jsonInterfaceFuncs = matcher{
	"encoding/json.(*decodeState).objectInterface", "encoding/json.(*decodeState).arrayInterface",
	"encoding/json.(*decodeState).valueInterface", "encoding/json.(*decodeState).literalInterface",
}

// jsonEncodeFuncs and jsonDecodeFuncs are encoding/json's ways in for each
// direction: the outermost encoding/json frame of a stack says whether the
// work under it encodes or decodes.
var (
	jsonEncodeFuncs = matcher{"encoding/json.Marshal", "encoding/json.MarshalIndent", "encoding/json.(*Encoder).*", "encoding/json.(*encodeState).*"}
	jsonDecodeFuncs = matcher{"encoding/json.Unmarshal", "encoding/json.(*Decoder).*", "encoding/json.(*decodeState).*"}
)

// jsonMinDirection is the share of a function's JSON work one direction
// must have for the finding to speak of it.
const jsonMinDirection = 0.10

// Fixes of the json-reflect rule by direction; a finding on both
// directions gives both.
var (
	jsonEncodeFix = Fix{
		Summary: "Encode less and more cheaply: keep the encoded bytes when the same answer is served again, encode typed structs rather than map[string]any, and where encoding still dominates use encoding/json/v2, a code generator or append the JSON with strconv.",
		Example: `// before: reflection over a map per response
json.NewEncoder(w).Encode(map[string]any{"account": id, "balance": balance})

// after: appended by hand into a buffer kept across calls
buf = append(buf[:0], ` + "`" + `{"account":` + "`" + `...)
buf = strconv.AppendQuote(buf, id)
buf = append(buf, ` + "`" + `,"balance":` + "`" + `...)
buf = strconv.AppendFloat(buf, balance, 'g', -1, 64)
buf = append(buf, '}')
w.Write(buf)`,
	}
	jsonDecodeFix = Fix{
		Summary: "Decode into typed structs instead of map[string]any, keep the decoded value when the same input is parsed again, and where decoding still dominates use encoding/json/v2 or a code generator.",
		Example: `// before
var doc map[string]any
json.Unmarshal(body, &doc)
amount := doc["amount"].(float64)

// after: typed, and decoded once when the input repeats
type Tx struct {
	Amount float64 ` + "`json:\"amount\"`" + `
}
var tx Tx
json.Unmarshal(body, &tx)`,
	}
	jsonBothFix = Fix{
		Summary: "Encoding: " + jsonEncodeFix.Summary + " Decoding: " + jsonDecodeFix.Summary,
		Example: jsonEncodeFix.Example + "\n\n" + jsonDecodeFix.Example,
	}
)

func jsonRule() Rule {
	return Rule{
		ID:        "json-reflect",
		Title:     "Reflection-heavy encoding/json on a hot path",
		Summary:   "encoding/json's reflection takes a large share of CPU or allocations",
		Resources: []Resource{CPU, AllocObjects, AllocBytes},
		Explanation: sentence(`
encoding/json works by reflection: for every value it looks up how to encode or
decode its type, walks it field by field through package reflect, and decoding
allocates every string, slice and map it produces. Decoding into
map[string]any or []any is the slowest way: every number becomes a boxed
float64 and every object a new map.

The rule charges CPU and allocations inside encoding/json (and the reflect work
under it) to the line of your code that called Marshal, Unmarshal, Encode or
Decode. It fires when one function's JSON work takes at least {} of CPU or {}
of allocated objects. The evidence says how much of it is reflect, and whether
the input is decoded into interface values. The advice follows the direction
of the work: encoding (Marshal, MarshalIndent, Encoder.Encode), decoding
(Unmarshal, Decoder.Decode), or both when each has at least {} of it.

Faster options, from least to most invasive, with their trade-offs:
  - decode into typed structs instead of map[string]any: less allocation, same
    API; encoding typed structs also beats encoding maps, whose keys are sorted
    on every call;
  - json.NewDecoder(r.Body).Decode streams from the reader instead of reading
    the whole body first (it does not make decoding itself cheaper);
  - cache the encoded result when the same answer is served again, or the
    decoded value when the same input is parsed again;
  - encoding/json/v2 (GOEXPERIMENT=jsonv2 in Go 1.25+, or
    github.com/go-json-experiment/json) is markedly faster with nearly the same API;
  - code generators (easyjson, ffjson) or, for encoding, hand-written appends
    with strconv remove reflection entirely, at the cost of code to keep in sync.`,
			share(jsonCPU), share(jsonObjects), share(jsonMinDirection)),
		Fix:   jsonBothFix,
		check: checkJSON,
	}
}

// jsonDirection says whether the encoding/json work of a stack encodes or
// decodes, by its outermost encoding/json frame; "" for neither (Valid,
// Compact, Indent).
func jsonDirection(fs []frame) string {
	for i := len(fs) - 1; i >= 0; i-- {
		switch fn := fs[i].fn; {
		case jsonEncodeFuncs.match(fn):
			return "encode"
		case jsonDecodeFuncs.match(fn):
			return "decode"
		case profiles.PackagePath(fn) == "encoding/json":
			return ""
		}
	}
	return ""
}

func checkJSON(e *env, r *Rule) []Finding {
	q := callerQuery{match: inPackages("encoding/json")}
	order := []Resource{CPU, AllocObjects, AllocBytes}
	byRes := map[Resource]sites{}
	for _, res := range order {
		byRes[res] = e.callers(res, q)
	}
	// Reflect and interface decoding under each line, for the evidence.
	reflectCPU := e.callers(CPU, callerQuery{match: inPackages("encoding/json"), keep: func(fs []frame) bool {
		return anyFrame(fs, inPackages("reflect", "internal/reflectlite"))
	}})
	ifaceCPU := e.callers(CPU, callerQuery{match: inPackages("encoding/json"), keep: func(fs []frame) bool {
		return anyFrame(fs, jsonInterfaceFuncs.match)
	}})
	ifaceObjects := e.callers(AllocObjects, callerQuery{match: inPackages("encoding/json"), keep: func(fs []frame) bool {
		return anyFrame(fs, jsonInterfaceFuncs.match)
	}})
	// Each line's work by direction, in CPU and in objects.
	directions := []string{"encode", "decode"}
	byDir := map[string]map[Resource]sites{}
	for _, dir := range directions {
		byDir[dir] = map[Resource]sites{}
		for _, res := range order[:2] {
			byDir[dir][res] = e.callers(res, callerQuery{match: inPackages("encoding/json"), keep: func(fs []frame) bool {
				return jsonDirection(fs) == dir
			}})
		}
	}
	ls := lines(byRes, order...)
	var out []Finding
	for _, g := range e.groups(ls, order, atLeast(map[Resource]float64{CPU: jsonCPU, AllocObjects: jsonObjects})) {
		sev, res := g.top(order[:2])
		var evs []Evidence
		var calls []string
		var refl, cpu int64
		iface := false
		dirValues := map[string]map[Resource]int64{"encode": {}, "decode": {}}
		for _, l := range g.lines {
			ev := e.evidence(l, order)
			var details []Text
			var does []string
			for _, dir := range directions {
				for _, res := range order[:2] {
					if s := byDir[dir][res][l.siteKey]; s != nil {
						dirValues[dir][res] += s.value
						if !contains(does, dir+"s") {
							does = append(does, dir+"s")
						}
					}
				}
			}
			if len(does) > 0 {
				details = append(details, sentence("{}", strings.Join(does, " and ")))
			}
			if s := reflectCPU[l.siteKey]; s != nil && l.values[CPU] > 0 {
				refl += s.value
				details = append(details, sentence("{} of this CPU is in reflect", share(float64(s.value)/float64(l.values[CPU]))))
			}
			if ifaceCPU[l.siteKey] != nil || ifaceObjects[l.siteKey] != nil {
				iface = true
				details = append(details, sentence("decodes into interface values (map[string]any / []any)"))
			}
			ev.Detail = join(details, "; ")
			cpu += l.values[CPU]
			if ev.Call != "" && !contains(calls, ev.Call) {
				calls = append(calls, ev.Call)
			}
			evs = append(evs, ev)
		}
		// A direction counts when it has enough of the group's CPU or
		// objects to be worth advice of its own.
		var dirs []string
		for _, dir := range directions {
			for _, res := range order[:2] {
				if v := g.values[res]; v > 0 && float64(dirValues[dir][res]) >= jsonMinDirection*float64(v) {
					dirs = append(dirs, dir)
					break
				}
			}
		}
		fix, doing := jsonBothFix, "encoding and decoding"
		switch {
		case len(dirs) == 1 && dirs[0] == "encode":
			fix, doing = jsonEncodeFix, "encoding"
		case len(dirs) == 1 && dirs[0] == "decode":
			fix, doing = jsonDecodeFix, "decoding"
		}
		summary := sentence("{} spends {} {} with encoding/json ({})", g.fn, shareText(g, order), doing, strings.Join(calls, ", "))
		if cpu > 0 && refl > 0 {
			summary = sentence("{}, {} of that CPU in reflect", summary, share(float64(refl)/float64(cpu)))
		}
		summary = sentence("{}.", summary)
		if iface {
			summary = sentence("{} It decodes into interface values, the slowest way.", summary)
		}
		f := r.finding(sev, res, summary, evs)
		f.Fix = fix
		out = append(out, f)
	}
	return out
}
