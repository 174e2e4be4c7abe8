package findings

import (
	"fmt"
	"strings"

	"github.com/perfscope/perfscope/internal/units"
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

func jsonRule() Rule {
	return Rule{
		ID:        "json-reflect",
		Title:     "Reflection-heavy encoding/json on a hot path",
		Summary:   "encoding/json's reflection takes a large share of CPU or allocations",
		Resources: []Resource{CPU, AllocObjects, AllocBytes},
		Explanation: fmt.Sprintf(`
encoding/json works by reflection: for every value it looks up how to encode or
decode its type, walks it field by field through package reflect, and decoding
allocates every string, slice and map it produces. Decoding into
map[string]any or []any is the slowest way: every number becomes a boxed
float64 and every object a new map.

The rule charges CPU and allocations inside encoding/json (and the reflect work
under it) to the line of your code that called Marshal, Unmarshal, Encode or
Decode. It fires when one function's JSON work takes at least %s of CPU or %s
of allocated objects. The evidence says how much of it is reflect, and whether
the input is decoded into interface values.

Faster options, from least to most invasive, with their trade-offs:
  - decode into typed structs instead of map[string]any: less allocation, same API;
  - json.NewDecoder(r.Body).Decode streams from the reader instead of reading
    the whole body first (it does not make decoding itself cheaper);
  - cache the encoded result when the same answer is served again, or the
    decoded value when the same input is parsed again;
  - encoding/json/v2 (GOEXPERIMENT=jsonv2 in Go 1.25+, or
    github.com/go-json-experiment/json) is markedly faster with nearly the same API;
  - code generators (easyjson, ffjson) or hand-written appends with strconv
    remove reflection entirely, at the cost of generated code to keep in sync.`,
			units.Percent(jsonCPU), units.Percent(jsonObjects)),
		Fix: Fix{
			Summary: "Decode into typed structs, cache results that repeat, and where it still dominates use encoding/json/v2, a code generator or a hand-written encoder.",
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
		},
		check: checkJSON,
	}
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
	ls := lines(byRes, order...)
	var out []Finding
	for _, g := range e.groups(ls, order, atLeast(map[Resource]float64{CPU: jsonCPU, AllocObjects: jsonObjects})) {
		sev, res := g.top(order[:2])
		var evs []Evidence
		var calls []string
		var refl, cpu int64
		iface := false
		for _, l := range g.lines {
			ev := e.evidence(l, order)
			var details []string
			if s := reflectCPU[l.siteKey]; s != nil && l.values[CPU] > 0 {
				refl += s.value
				details = append(details, units.Percent(float64(s.value)/float64(l.values[CPU]))+" of this CPU is in reflect")
			}
			if ifaceCPU[l.siteKey] != nil || ifaceObjects[l.siteKey] != nil {
				iface = true
				details = append(details, "decodes into interface values (map[string]any / []any)")
			}
			ev.Detail = strings.Join(details, "; ")
			cpu += l.values[CPU]
			if ev.Call != "" && !contains(calls, ev.Call) {
				calls = append(calls, ev.Call)
			}
			evs = append(evs, ev)
		}
		summary := fmt.Sprintf("%s spends %s in encoding/json (%s)", g.fn, shareText(g, order), strings.Join(calls, ", "))
		if cpu > 0 && refl > 0 {
			summary += fmt.Sprintf(", %s of that CPU in reflect", units.Percent(float64(refl)/float64(cpu)))
		}
		summary += "."
		if iface {
			summary += " It decodes into interface values, the slowest way."
		}
		out = append(out, r.finding(sev, res, summary, evs))
	}
	return out
}
