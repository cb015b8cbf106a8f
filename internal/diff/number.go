package diff

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// isNumber reports whether v is one of the numeric kinds a decoded JSON
// tree may hold.
func isNumber(v any) bool {
	switch v.(type) {
	case float64, float32, int, int8, int16, int32, int64,
		uint, uint8, uint16, uint32, uint64, json.Number:
		return true
	}
	return false
}

// numbersEqual compares two numbers (isNumber) by value: float64(1),
// int64(1) and json.Number("1.0") are equal. Floats compare by their
// shortest decimal form, the form JSON carries.
func numbersEqual(a, b any) bool {
	// Fast paths for the common same-kind cases.
	switch x := a.(type) {
	case float64:
		if y, ok := b.(float64); ok {
			return x == y || (math.IsNaN(x) && math.IsNaN(y))
		}
	case int64:
		if y, ok := b.(int64); ok {
			return x == y
		}
	case json.Number:
		if y, ok := b.(json.Number); ok && x == y {
			return true
		}
	}
	return canonicalNumber(a) == canonicalNumber(b)
}

// canonicalNumber renders a number as a normalized decimal "[-]D+eE" with no
// leading or trailing zeros in the digits ("0" for zero), so that equal
// values give equal strings whatever their Go type or JSON spelling.
func canonicalNumber(v any) string {
	switch x := v.(type) {
	case float64:
		return canonicalFloat(x, 64)
	case float32:
		return canonicalFloat(float64(x), 32)
	case int:
		return normalizeDecimal(strconv.FormatInt(int64(x), 10))
	case int8:
		return normalizeDecimal(strconv.FormatInt(int64(x), 10))
	case int16:
		return normalizeDecimal(strconv.FormatInt(int64(x), 10))
	case int32:
		return normalizeDecimal(strconv.FormatInt(int64(x), 10))
	case int64:
		return normalizeDecimal(strconv.FormatInt(x, 10))
	case uint:
		return normalizeDecimal(strconv.FormatUint(uint64(x), 10))
	case uint8:
		return normalizeDecimal(strconv.FormatUint(uint64(x), 10))
	case uint16:
		return normalizeDecimal(strconv.FormatUint(uint64(x), 10))
	case uint32:
		return normalizeDecimal(strconv.FormatUint(uint64(x), 10))
	case uint64:
		return normalizeDecimal(strconv.FormatUint(x, 10))
	case json.Number:
		return normalizeDecimal(string(x))
	}
	return ""
}

func canonicalFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return normalizeDecimal(strconv.FormatFloat(f, 'e', -1, bits))
}

// normalizeDecimal normalizes a JSON number literal (also accepting a
// leading "+" and the forms strconv produces). A string that is not a number
// is returned with a prefix that no number produces, so it only equals
// itself.
func normalizeDecimal(s string) string {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart := s[start:i]
	fracPart := ""
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		fracPart = s[fs:i]
	}
	if intPart == "" && fracPart == "" {
		return "?" + s
	}
	expText := ""
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		es := i
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		ds := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if ds == i {
			return "?" + s
		}
		expText = s[es:i]
	}
	if i != len(s) {
		return "?" + s
	}
	digits := strings.TrimLeft(intPart+fracPart, "0")
	if digits == "" {
		return "0"
	}
	trimmed := strings.TrimRight(digits, "0")
	// value = digits * 10^(exp - len(fracPart)); after trimming trailing
	// zeros the exponent grows by their count.
	shift := int64(len(digits)-len(trimmed)) - int64(len(fracPart))
	var exp string
	if e, err := strconv.ParseInt(strings.TrimPrefix(expText, "+"), 10, 64); expText == "" || err == nil {
		// Adding shift cannot overflow unless e is within a few billion of
		// the int64 limits; use big.Int there.
		if e > math.MaxInt64/2 || e < math.MinInt64/2 {
			exp = bigExp(expText, shift)
		} else {
			exp = strconv.FormatInt(e+shift, 10)
		}
	} else {
		exp = bigExp(expText, shift)
	}
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + trimmed + "e" + exp
}

// bigExp adds shift to a decimal exponent too large for int64 arithmetic.
func bigExp(expText string, shift int64) string {
	e, ok := new(big.Int).SetString(strings.TrimPrefix(expText, "+"), 10)
	if !ok {
		return "?" + expText
	}
	return e.Add(e, big.NewInt(shift)).String()
}
