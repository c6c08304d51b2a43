package main

import (
	"strings"
	"testing"
)

func TestServeCheckListen(t *testing.T) {
	tests := []struct {
		addr, key string
		wantErr   string
	}{
		{"127.0.0.1:8090", "", ""},
		{"localhost:8090", "", ""},
		{"[::1]:8090", "", ""},
		{"0.0.0.0:8090", "", "--api-key"},
		{"192.168.1.5:8090", "", "--api-key"},
		{"0.0.0.0:8090", "k", ""},
		{"8090", "", "HOST:PORT"},
	}
	for _, tt := range tests {
		err := checkListen(tt.addr, tt.key)
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("checkListen(%q, %q) = %v, want an error naming %q", tt.addr, tt.key, err, tt.wantErr)
		}
	}
}
