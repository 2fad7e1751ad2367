package transport

import (
	"reflect"
	"testing"
	"time"
)

// TestBackoffSequence: the delays of one retry budget double from Backoff and stay at
// MaxBackoff once they reach it, for as many retries as the budget allows.
func TestBackoffSequence(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		o    RetryOptions
		n    int
		want []time.Duration
	}{
		{"doubling", RetryOptions{Attempts: 5, Backoff: 200 * ms, MaxBackoff: 30 * time.Second}, 4,
			[]time.Duration{200 * ms, 400 * ms, 800 * ms, 1600 * ms}},
		{"capped, then the cap on every later retry", RetryOptions{Attempts: 7, Backoff: 10 * ms, MaxBackoff: 35 * ms}, 6,
			[]time.Duration{10 * ms, 20 * ms, 35 * ms, 35 * ms, 35 * ms, 35 * ms}},
		{"backoff above the cap", RetryOptions{Attempts: 3, Backoff: time.Second, MaxBackoff: 100 * ms}, 2,
			[]time.Duration{100 * ms, 100 * ms}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.o.Delays()
			var got []time.Duration
			for range tc.n {
				got = append(got, b.Step())
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
