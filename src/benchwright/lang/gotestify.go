// Package assert is benchwright's stand-in for github.com/stretchr/testify/assert: the part of
// its API that test code commonly uses, with testify's comparisons (ObjectsAreEqual: reflect's
// deep equality, []byte by content; no conversions but in EqualValues) and messages of the same
// shape ("Not equal: \nexpected: ...\nactual  : ..."). A failure calls t.Errorf, so the test
// goes on, as with testify; every function returns whether its check held. It is compiled into
// a sample only when the tests import testify (no module is fetched: there is no network).
package assert

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strings"
)

// TestingT is what the assertions need of a test (benchwright's *bwdriver.T, or *testing.T).
type TestingT interface {
	Errorf(format string, args ...interface{})
}

type tHelper interface{ Helper() }

// Assertions binds the assertions to one test: assert.New(t).
type Assertions struct{ t TestingT }

// New makes the Assertions of t.
func New(t TestingT) *Assertions { return &Assertions{t: t} }

func messageFrom(msgAndArgs []interface{}) string {
	if len(msgAndArgs) == 0 {
		return ""
	}
	if len(msgAndArgs) == 1 {
		if s, ok := msgAndArgs[0].(string); ok {
			return s
		}
		return fmt.Sprintf("%+v", msgAndArgs[0])
	}
	if format, ok := msgAndArgs[0].(string); ok {
		return fmt.Sprintf(format, msgAndArgs[1:]...)
	}
	return fmt.Sprint(msgAndArgs...)
}

// Fail reports a failure: the message, then the user's message ("Messages: ...").
func Fail(t TestingT, failure string, msgAndArgs ...interface{}) bool {
	if h, ok := t.(tHelper); ok {
		h.Helper()
	}
	if m := messageFrom(msgAndArgs); m != "" {
		failure += "\nMessages: " + m
	}
	t.Errorf("%s", failure)
	return false
}

// ObjectsAreEqual is testify's equality: []byte by content, anything else by reflect.DeepEqual
// (so 1 and int64(1) differ, and so do a nil slice and an empty one).
func ObjectsAreEqual(expected, actual interface{}) bool {
	if expected == nil || actual == nil {
		return expected == actual
	}
	exp, ok := expected.([]byte)
	if !ok {
		return reflect.DeepEqual(expected, actual)
	}
	act, ok := actual.([]byte)
	if !ok {
		return false
	}
	if exp == nil || act == nil {
		return exp == nil && act == nil
	}
	return bytes.Equal(exp, act)
}

// ObjectsAreEqualValues is ObjectsAreEqual, or equal once actual is converted to expected's type.
func ObjectsAreEqualValues(expected, actual interface{}) bool {
	if ObjectsAreEqual(expected, actual) {
		return true
	}
	if expected == nil || actual == nil {
		return false
	}
	et, av := reflect.TypeOf(expected), reflect.ValueOf(actual)
	if !av.Type().ConvertibleTo(et) {
		return false
	}
	return reflect.DeepEqual(expected, av.Convert(et).Interface())
}

func show(expected, actual interface{}) (string, string) {
	if expected != nil && actual != nil && reflect.TypeOf(expected) != reflect.TypeOf(actual) {
		return fmt.Sprintf("%T(%#v)", expected, expected), fmt.Sprintf("%T(%#v)", actual, actual)
	}
	return fmt.Sprintf("%#v", expected), fmt.Sprintf("%#v", actual)
}

func isFunc(v interface{}) bool {
	return v != nil && reflect.TypeOf(v).Kind() == reflect.Func
}

// Equal checks that expected and actual are equal (ObjectsAreEqual).
func Equal(t TestingT, expected, actual interface{}, msgAndArgs ...interface{}) bool {
	if isFunc(expected) || isFunc(actual) {
		return Fail(t, fmt.Sprintf("Invalid operation: %#v == %#v (cannot take func type as argument)",
			expected, actual), msgAndArgs...)
	}
	if !ObjectsAreEqual(expected, actual) {
		e, a := show(expected, actual)
		return Fail(t, "Not equal: \nexpected: "+e+"\nactual  : "+a, msgAndArgs...)
	}
	return true
}

// NotEqual checks that expected and actual differ.
func NotEqual(t TestingT, expected, actual interface{}, msgAndArgs ...interface{}) bool {
	if ObjectsAreEqual(expected, actual) {
		return Fail(t, fmt.Sprintf("Should not be: %#v", actual), msgAndArgs...)
	}
	return true
}

// EqualValues checks equality after converting actual to expected's type.
func EqualValues(t TestingT, expected, actual interface{}, msgAndArgs ...interface{}) bool {
	if !ObjectsAreEqualValues(expected, actual) {
		e, a := show(expected, actual)
		return Fail(t, "Not equal: \nexpected: "+e+"\nactual  : "+a, msgAndArgs...)
	}
	return true
}

// NotEqualValues checks inequality after converting actual to expected's type.
func NotEqualValues(t TestingT, expected, actual interface{}, msgAndArgs ...interface{}) bool {
	if ObjectsAreEqualValues(expected, actual) {
		return Fail(t, fmt.Sprintf("Should not be: %#v", actual), msgAndArgs...)
	}
	return true
}

// Exactly checks that expected and actual have the same type and are equal.
func Exactly(t TestingT, expected, actual interface{}, msgAndArgs ...interface{}) bool {
	if reflect.TypeOf(expected) != reflect.TypeOf(actual) {
		return Fail(t, fmt.Sprintf("Types expected to match exactly\n\t%v != %v",
			reflect.TypeOf(expected), reflect.TypeOf(actual)), msgAndArgs...)
	}
	return Equal(t, expected, actual, msgAndArgs...)
}

// True checks that value is true.
func True(t TestingT, value bool, msgAndArgs ...interface{}) bool {
	if !value {
		return Fail(t, "Should be true", msgAndArgs...)
	}
	return true
}

// False checks that value is false.
func False(t TestingT, value bool, msgAndArgs ...interface{}) bool {
	if value {
		return Fail(t, "Should be false", msgAndArgs...)
	}
	return true
}

func isNil(object interface{}) bool {
	if object == nil {
		return true
	}
	v := reflect.ValueOf(object)
	switch v.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Ptr, reflect.Slice, reflect.UnsafePointer:
		return v.IsNil()
	}
	return false
}

// Nil checks that object is nil (a nil pointer, slice, map... in an interface counts).
func Nil(t TestingT, object interface{}, msgAndArgs ...interface{}) bool {
	if !isNil(object) {
		return Fail(t, fmt.Sprintf("Expected nil, but got: %#v", object), msgAndArgs...)
	}
	return true
}

// NotNil checks that object is not nil.
func NotNil(t TestingT, object interface{}, msgAndArgs ...interface{}) bool {
	if isNil(object) {
		return Fail(t, "Expected value not to be nil.", msgAndArgs...)
	}
	return true
}

func isEmpty(object interface{}) bool {
	if object == nil {
		return true
	}
	v := reflect.ValueOf(object)
	switch v.Kind() {
	case reflect.Chan, reflect.Map, reflect.Slice:
		return v.Len() == 0
	case reflect.Ptr:
		if v.IsNil() {
			return true
		}
		return isEmpty(v.Elem().Interface())
	}
	return reflect.DeepEqual(object, reflect.Zero(v.Type()).Interface())
}

// Empty checks that object is nil, zero, or of length 0.
func Empty(t TestingT, object interface{}, msgAndArgs ...interface{}) bool {
	if !isEmpty(object) {
		return Fail(t, fmt.Sprintf("Should be empty, but was %v", object), msgAndArgs...)
	}
	return true
}

// NotEmpty checks that object is not Empty.
func NotEmpty(t TestingT, object interface{}, msgAndArgs ...interface{}) bool {
	if isEmpty(object) {
		return Fail(t, fmt.Sprintf("Should NOT be empty, but was %v", object), msgAndArgs...)
	}
	return true
}

// Zero checks that i is its type's zero value.
func Zero(t TestingT, i interface{}, msgAndArgs ...interface{}) bool {
	if i != nil && !reflect.DeepEqual(i, reflect.Zero(reflect.TypeOf(i)).Interface()) {
		return Fail(t, fmt.Sprintf("Should be zero, but was %v", i), msgAndArgs...)
	}
	return true
}

// NotZero checks that i is not its type's zero value.
func NotZero(t TestingT, i interface{}, msgAndArgs ...interface{}) bool {
	if i == nil || reflect.DeepEqual(i, reflect.Zero(reflect.TypeOf(i)).Interface()) {
		return Fail(t, fmt.Sprintf("Should not be zero, but was %v", i), msgAndArgs...)
	}
	return true
}

// Len checks that object (a string, slice, array, map or channel) has length length.
func Len(t TestingT, object interface{}, length int, msgAndArgs ...interface{}) bool {
	v := reflect.ValueOf(object)
	switch v.Kind() {
	case reflect.String, reflect.Slice, reflect.Array, reflect.Map, reflect.Chan:
	default:
		return Fail(t, fmt.Sprintf("\"%v\" could not be applied builtin len()", object), msgAndArgs...)
	}
	if v.Len() != length {
		return Fail(t, fmt.Sprintf("\"%v\" should have %d item(s), but has %d", object, length, v.Len()), msgAndArgs...)
	}
	return true
}

// includes: whether list (a string, map, slice or array) holds element; ok is false when list
// is none of those.
func includes(list, element interface{}) (ok, found bool) {
	v := reflect.ValueOf(list)
	switch v.Kind() {
	case reflect.String:
		e := reflect.ValueOf(element)
		if e.Kind() != reflect.String {
			return true, false
		}
		return true, strings.Contains(v.String(), e.String())
	case reflect.Map:
		for _, k := range v.MapKeys() {
			if ObjectsAreEqual(k.Interface(), element) {
				return true, true
			}
		}
		return true, false
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if ObjectsAreEqual(v.Index(i).Interface(), element) {
				return true, true
			}
		}
		return true, false
	}
	return false, false
}

// Contains checks that s (a string, map or slice) contains contains.
func Contains(t TestingT, s, contains interface{}, msgAndArgs ...interface{}) bool {
	ok, found := includes(s, contains)
	if !ok {
		return Fail(t, fmt.Sprintf("%#v could not be applied builtin len()", s), msgAndArgs...)
	}
	if !found {
		return Fail(t, fmt.Sprintf("%#v does not contain %#v", s, contains), msgAndArgs...)
	}
	return true
}

// NotContains checks that s does not contain contains.
func NotContains(t TestingT, s, contains interface{}, msgAndArgs ...interface{}) bool {
	ok, found := includes(s, contains)
	if !ok {
		return Fail(t, fmt.Sprintf("%#v could not be applied builtin len()", s), msgAndArgs...)
	}
	if found {
		return Fail(t, fmt.Sprintf("%#v should not contain %#v", s, contains), msgAndArgs...)
	}
	return true
}

// ElementsMatch checks that two lists hold the same elements, in any order.
func ElementsMatch(t TestingT, listA, listB interface{}, msgAndArgs ...interface{}) bool {
	if isEmpty(listA) && isEmpty(listB) {
		return true
	}
	a, b := reflect.ValueOf(listA), reflect.ValueOf(listB)
	for _, v := range []reflect.Value{a, b} {
		if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
			return Fail(t, fmt.Sprintf("%q has an unsupported type %s", v, v.Kind()), msgAndArgs...)
		}
	}
	used := make([]bool, b.Len())
	extraA := []interface{}{}
	for i := 0; i < a.Len(); i++ {
		matched := false
		for j := 0; j < b.Len(); j++ {
			if !used[j] && ObjectsAreEqual(a.Index(i).Interface(), b.Index(j).Interface()) {
				used[j], matched = true, true
				break
			}
		}
		if !matched {
			extraA = append(extraA, a.Index(i).Interface())
		}
	}
	extraB := []interface{}{}
	for j := 0; j < b.Len(); j++ {
		if !used[j] {
			extraB = append(extraB, b.Index(j).Interface())
		}
	}
	if len(extraA) == 0 && len(extraB) == 0 {
		return true
	}
	return Fail(t, fmt.Sprintf("elements differ\nextra elements in list A: %#v\nextra elements in list B: %#v\nlistA: %#v\nlistB: %#v",
		extraA, extraB, listA, listB), msgAndArgs...)
}

func toFloat(x interface{}) (float64, bool) {
	v := reflect.ValueOf(x)
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(v.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(v.Uint()), true
	case reflect.Float32, reflect.Float64:
		return v.Float(), true
	}
	return 0, false
}

// InDelta checks that expected and actual (numbers) are within delta of each other.
func InDelta(t TestingT, expected, actual interface{}, delta float64, msgAndArgs ...interface{}) bool {
	e, okE := toFloat(expected)
	a, okA := toFloat(actual)
	if !okE || !okA {
		return Fail(t, "Parameters must be numerical", msgAndArgs...)
	}
	if math.IsNaN(e) || math.IsNaN(a) {
		return Fail(t, fmt.Sprintf("Expected %v and actual %v must not be NaN", e, a), msgAndArgs...)
	}
	if d := e - a; d < -delta || d > delta {
		return Fail(t, fmt.Sprintf("Max difference between %v and %v allowed is %v, but difference was %v", expected, actual, delta, d), msgAndArgs...)
	}
	return true
}

// Error checks that err is not nil.
func Error(t TestingT, err error, msgAndArgs ...interface{}) bool {
	if err == nil {
		return Fail(t, "An error is expected but got nil.", msgAndArgs...)
	}
	return true
}

// NoError checks that err is nil.
func NoError(t TestingT, err error, msgAndArgs ...interface{}) bool {
	if err != nil {
		return Fail(t, fmt.Sprintf("Received unexpected error:\n%+v", err), msgAndArgs...)
	}
	return true
}

func panics(f func()) (did bool, value interface{}) {
	did = true
	defer func() { value = recover() }()
	f()
	did = false
	return
}

// Panics checks that f panics.
func Panics(t TestingT, f func(), msgAndArgs ...interface{}) bool {
	if did, _ := panics(f); !did {
		return Fail(t, fmt.Sprintf("func %#v should panic", f), msgAndArgs...)
	}
	return true
}

// NotPanics checks that f does not panic.
func NotPanics(t TestingT, f func(), msgAndArgs ...interface{}) bool {
	if did, value := panics(f); did {
		return Fail(t, fmt.Sprintf("func %#v should not panic\n\tPanic value:\t%v", f, value), msgAndArgs...)
	}
	return true
}

// The same assertions bound to a test (assert := assert.New(t); assert.Equal(...)).

func (a *Assertions) Fail(failure string, msgAndArgs ...interface{}) bool {
	return Fail(a.t, failure, msgAndArgs...)
}
func (a *Assertions) Equal(expected, actual interface{}, msgAndArgs ...interface{}) bool {
	return Equal(a.t, expected, actual, msgAndArgs...)
}
func (a *Assertions) NotEqual(expected, actual interface{}, msgAndArgs ...interface{}) bool {
	return NotEqual(a.t, expected, actual, msgAndArgs...)
}
func (a *Assertions) EqualValues(expected, actual interface{}, msgAndArgs ...interface{}) bool {
	return EqualValues(a.t, expected, actual, msgAndArgs...)
}
func (a *Assertions) NotEqualValues(expected, actual interface{}, msgAndArgs ...interface{}) bool {
	return NotEqualValues(a.t, expected, actual, msgAndArgs...)
}
func (a *Assertions) Exactly(expected, actual interface{}, msgAndArgs ...interface{}) bool {
	return Exactly(a.t, expected, actual, msgAndArgs...)
}
func (a *Assertions) True(value bool, msgAndArgs ...interface{}) bool {
	return True(a.t, value, msgAndArgs...)
}
func (a *Assertions) False(value bool, msgAndArgs ...interface{}) bool {
	return False(a.t, value, msgAndArgs...)
}
func (a *Assertions) Nil(object interface{}, msgAndArgs ...interface{}) bool {
	return Nil(a.t, object, msgAndArgs...)
}
func (a *Assertions) NotNil(object interface{}, msgAndArgs ...interface{}) bool {
	return NotNil(a.t, object, msgAndArgs...)
}
func (a *Assertions) Empty(object interface{}, msgAndArgs ...interface{}) bool {
	return Empty(a.t, object, msgAndArgs...)
}
func (a *Assertions) NotEmpty(object interface{}, msgAndArgs ...interface{}) bool {
	return NotEmpty(a.t, object, msgAndArgs...)
}
func (a *Assertions) Zero(i interface{}, msgAndArgs ...interface{}) bool {
	return Zero(a.t, i, msgAndArgs...)
}
func (a *Assertions) NotZero(i interface{}, msgAndArgs ...interface{}) bool {
	return NotZero(a.t, i, msgAndArgs...)
}
func (a *Assertions) Len(object interface{}, length int, msgAndArgs ...interface{}) bool {
	return Len(a.t, object, length, msgAndArgs...)
}
func (a *Assertions) Contains(s, contains interface{}, msgAndArgs ...interface{}) bool {
	return Contains(a.t, s, contains, msgAndArgs...)
}
func (a *Assertions) NotContains(s, contains interface{}, msgAndArgs ...interface{}) bool {
	return NotContains(a.t, s, contains, msgAndArgs...)
}
func (a *Assertions) ElementsMatch(listA, listB interface{}, msgAndArgs ...interface{}) bool {
	return ElementsMatch(a.t, listA, listB, msgAndArgs...)
}
func (a *Assertions) InDelta(expected, actual interface{}, delta float64, msgAndArgs ...interface{}) bool {
	return InDelta(a.t, expected, actual, delta, msgAndArgs...)
}
func (a *Assertions) Error(err error, msgAndArgs ...interface{}) bool {
	return Error(a.t, err, msgAndArgs...)
}
func (a *Assertions) NoError(err error, msgAndArgs ...interface{}) bool {
	return NoError(a.t, err, msgAndArgs...)
}
func (a *Assertions) Panics(f func(), msgAndArgs ...interface{}) bool {
	return Panics(a.t, f, msgAndArgs...)
}
func (a *Assertions) NotPanics(f func(), msgAndArgs ...interface{}) bool {
	return NotPanics(a.t, f, msgAndArgs...)
}
