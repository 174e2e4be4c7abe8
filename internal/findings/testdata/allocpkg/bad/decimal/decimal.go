// Package decimal is a small arbitrary-precision decimal type, written the
// way many decimal libraries are: every operation returns a new value
// with digits of its own, so each call allocates a little, at several
// lines of the package.
package decimal

import (
	"errors"
	"strings"
)

// A Decimal is coef × 10^exp, coef a non-negative number held as base-10
// digits, least significant first.
type Decimal struct {
	coef []byte
	exp  int
}

// Parse reads a non-negative decimal such as "12.50".
func Parse(s string) (*Decimal, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" {
		return nil, errors.New("decimal: empty number")
	}
	coef := make([]byte, 0, len(whole)+len(frac))
	for i := len(frac) - 1; i >= 0; i-- {
		coef = append(coef, frac[i]-'0')
	}
	for i := len(whole) - 1; i >= 0; i-- {
		coef = append(coef, whole[i]-'0')
	}
	return &Decimal{coef: coef, exp: -len(frac)}, nil
}

// FromInt returns n as a Decimal.
func FromInt(n int) *Decimal {
	d := &Decimal{}
	for ; n > 0; n /= 10 {
		d.coef = append(d.coef, byte(n%10))
	}
	return d
}

// shift returns d's digits at exponent exp (exp <= d.exp).
func (d *Decimal) shift(exp int) []byte {
	out := make([]byte, d.exp-exp, d.exp-exp+len(d.coef))
	return append(out, d.coef...)
}

// Add returns d + e.
func (d *Decimal) Add(e *Decimal) *Decimal {
	exp := min(d.exp, e.exp)
	a, b := d.shift(exp), e.shift(exp)
	if len(a) < len(b) {
		a, b = b, a
	}
	sum := make([]byte, len(a)+1)
	carry := byte(0)
	for i := range a {
		s := a[i] + carry
		if i < len(b) {
			s += b[i]
		}
		sum[i], carry = s%10, s/10
	}
	sum[len(a)] = carry
	return &Decimal{coef: trim(sum), exp: exp}
}

// Mul returns d × e.
func (d *Decimal) Mul(e *Decimal) *Decimal {
	prod := make([]int, len(d.coef)+len(e.coef))
	for i, x := range d.coef {
		for j, y := range e.coef {
			prod[i+j] += int(x) * int(y)
		}
	}
	coef := make([]byte, len(prod))
	carry := 0
	for i, p := range prod {
		p += carry
		coef[i], carry = byte(p%10), p/10
	}
	return &Decimal{coef: trim(coef), exp: d.exp + e.exp}
}

// Round returns d rounded half up to places decimal places.
func (d *Decimal) Round(places int) *Decimal {
	drop := -places - d.exp
	if drop <= 0 {
		return d
	}
	if drop > len(d.coef) {
		return &Decimal{exp: -places}
	}
	coef := append([]byte(nil), d.coef[drop:]...)
	if d.coef[drop-1] >= 5 {
		coef = append(coef, 0)
		for i := range coef {
			if coef[i]++; coef[i] < 10 {
				break
			}
			coef[i] = 0
		}
	}
	return &Decimal{coef: trim(coef), exp: -places}
}

// String formats d with its decimal places.
func (d *Decimal) String() string {
	var b strings.Builder
	for i := len(d.coef) - 1; i >= 0; i-- {
		if i == -d.exp-1 {
			b.WriteByte('.')
		}
		b.WriteByte('0' + d.coef[i])
	}
	return b.String()
}

// trim drops leading zero digits.
func trim(coef []byte) []byte {
	for len(coef) > 0 && coef[len(coef)-1] == 0 {
		coef = coef[:len(coef)-1]
	}
	return coef
}
