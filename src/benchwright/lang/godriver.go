// Package bwdriver is benchwright's test driver for Go samples; it is not part of any test case.
//
// The runner starts the test program once per test case with the test's index as its argument,
// a token on stdin and a pipe as file descriptor 3. This package is initialised before the main
// package (the solution and the tests), so it reads the token before any of the solution's
// init functions or package-level initialisers run. Main runs the test body on a goroutine of its
// own (so t.Fatal and runtime.Goexit end the test, not the program), recovers a panic, and
// writes one line "<token> {json}" on fd 3, then exits with 0.
package bwdriver

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

var (
	token   string
	channel *os.File
)

func init() {
	data, _ := io.ReadAll(os.Stdin)
	token = strings.TrimSpace(string(data))
	channel = os.NewFile(3, "benchwright-results")
}

// T is what a test body gets as t: the part of testing.T that makes sense for one test case,
// plus Equal.
type T struct {
	test    string
	mu      sync.Mutex
	failed  bool
	message []string
	file    string
	line    int
}

type record struct {
	Status  string  `json:"status"`
	Kind    string  `json:"kind,omitempty"`
	Message string  `json:"message,omitempty"`
	File    string  `json:"file,omitempty"`
	Line    int     `json:"line,omitempty"`
	TimeMs  float64 `json:"time_ms"`
}

// where finds the line to report: with inTest, the frame of the test function itself when it is
// on the stack (the line that called a helper); else the innermost frame of the main package
// (solution, prelude or test).
func (t *T) where(skip int, inTest bool) (string, int) {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(skip+1, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	file, line := "", 0
	for {
		frame, more := frames.Next()
		if inTest && frame.Function == t.test {
			return frame.File, frame.Line
		}
		if file == "" && strings.HasPrefix(frame.Function, "main.") {
			file, line = frame.File, frame.Line
		}
		if !more {
			break
		}
	}
	return file, line
}

func (t *T) report(message string) {
	file, line := t.where(3, true)
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.failed || t.line == 0 {
		t.file, t.line = file, line
	}
	t.failed = true
	t.message = append(t.message, message)
}

// Errorf records a failure; the test goes on.
func (t *T) Errorf(format string, args ...any) { t.report(fmt.Sprintf(format, args...)) }

// Error records a failure; the test goes on.
func (t *T) Error(args ...any) { t.report(strings.TrimSuffix(fmt.Sprintln(args...), "\n")) }

// Fatalf records a failure and ends the test.
func (t *T) Fatalf(format string, args ...any) {
	t.report(fmt.Sprintf(format, args...))
	runtime.Goexit()
}

// Fatal records a failure and ends the test.
func (t *T) Fatal(args ...any) {
	t.report(strings.TrimSuffix(fmt.Sprintln(args...), "\n"))
	runtime.Goexit()
}

// Fail marks the test failed; it goes on.
func (t *T) Fail() { t.report("test marked failed") }

// FailNow marks the test failed and ends it.
func (t *T) FailNow() {
	t.report("test marked failed")
	runtime.Goexit()
}

// Failed tells whether the test has failed so far.
func (t *T) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

// Log prints to the test's output.
func (t *T) Log(args ...any) { fmt.Println(args...) }

// Logf prints to the test's output.
func (t *T) Logf(format string, args ...any) { fmt.Println(fmt.Sprintf(format, args...)) }

// Helper does nothing: failures are reported at the line of the test body that called the helper.
func (t *T) Helper() {}

// Equal records a failure unless got equals want: deep equality where a nil slice or map equals
// an empty one and numbers of different types compare by value (2 == int64(2)).
func (t *T) Equal(got, want any, msgAndArgs ...any) bool {
	if equal(reflect.ValueOf(got), reflect.ValueOf(want)) {
		return true
	}
	g, w := fmt.Sprintf("%#v", got), fmt.Sprintf("%#v", want)
	if got != nil && want != nil && reflect.TypeOf(got) != reflect.TypeOf(want) {
		g += " (" + reflect.TypeOf(got).String() + ")"
		w += " (" + reflect.TypeOf(want).String() + ")"
	}
	message := "got " + g + ", want " + w
	if len(msgAndArgs) > 0 {
		var text string
		if format, ok := msgAndArgs[0].(string); ok && len(msgAndArgs) > 1 {
			text = fmt.Sprintf(format, msgAndArgs[1:]...)
		} else {
			text = strings.TrimSuffix(fmt.Sprintln(msgAndArgs...), "\n")
		}
		message = text + ": " + message
	}
	t.report(message)
	return false
}

func number(v reflect.Value) (float64, int64, uint64, int, bool) {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return 0, v.Int(), 0, 1, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return 0, 0, v.Uint(), 2, true
	case reflect.Float32, reflect.Float64:
		return v.Float(), 0, 0, 3, true
	}
	return 0, 0, 0, 0, false
}

func equal(a, b reflect.Value) bool {
	if !a.IsValid() || !b.IsValid() {
		return a.IsValid() == b.IsValid()
	}
	if fa, ia, ua, ka, ok := number(a); ok {
		fb, ib, ub, kb, ok := number(b)
		if !ok {
			return false
		}
		switch {
		case ka == 3 || kb == 3:
			x, y := fa, fb
			if ka == 1 {
				x = float64(ia)
			} else if ka == 2 {
				x = float64(ua)
			}
			if kb == 1 {
				y = float64(ib)
			} else if kb == 2 {
				y = float64(ub)
			}
			return x == y
		case ka == 1 && kb == 1:
			return ia == ib
		case ka == 2 && kb == 2:
			return ua == ub
		case ka == 1:
			return ia >= 0 && uint64(ia) == ub
		default:
			return ib >= 0 && uint64(ib) == ua
		}
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := 0; i < a.Len(); i++ {
			if !equal(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		iter := a.MapRange()
		for iter.Next() {
			other := b.MapIndex(iter.Key())
			if !other.IsValid() || !equal(iter.Value(), other) {
				return false
			}
		}
		return true
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return a.Pointer() == b.Pointer() || equal(a.Elem(), b.Elem())
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equal(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if !equal(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Complex64, reflect.Complex128:
		return a.Complex() == b.Complex()
	case reflect.Func:
		return a.IsNil() && b.IsNil()
	case reflect.Chan, reflect.UnsafePointer:
		return a.Pointer() == b.Pointer()
	}
	return false
}

func panicText(r any) string {
	switch v := r.(type) {
	case error:
		return v.Error()
	case string:
		return v
	}
	return fmt.Sprintf("%#v", r)
}

// Main runs the test whose index is the program's argument.
func Main(tests []func(*T)) {
	index, err := -1, error(nil)
	if len(os.Args) > 1 {
		index, err = strconv.Atoi(os.Args[1])
	}
	if err != nil || index < 0 || index >= len(tests) {
		fmt.Fprintln(os.Stderr, "benchwright: no such test")
		os.Exit(64)
	}
	fn := tests[index]
	t := &T{test: runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()}
	done := make(chan record, 1)
	started := time.Now()
	go func() {
		completed := false
		defer func() {
			r := recover()
			var rec record
			t.mu.Lock()
			failed, messages, file, line := t.failed, t.message, t.file, t.line
			t.mu.Unlock()
			switch {
			case r != nil:
				file, line = t.where(2, false)
				rec = record{Status: "error", Kind: "panic", Message: "panic: " + panicText(r), File: file, Line: line}
			case failed:
				rec = record{Status: "fail", Kind: "assert", Message: strings.Join(messages, "\n"), File: file, Line: line}
			case completed:
				rec = record{Status: "pass"}
			default:
				rec = record{Status: "error", Kind: "goexit", Message: "the test called runtime.Goexit"}
			}
			done <- rec
		}()
		fn(t)
		completed = true
	}()
	rec := <-done
	rec.TimeMs = float64(time.Since(started).Nanoseconds()) / 1e6
	if len(rec.Message) > 4000 {
		rec.Message = rec.Message[:4000] + "..."
	}
	data, _ := json.Marshal(rec)
	os.Stdout.Sync()
	channel.Write([]byte(token + " " + string(data) + "\n"))
	os.Exit(0)
}
