package logging

import (
	"bytes"
	"fmt"
	"log/slog"
	"testing"
)

func TestLevels(t *testing.T) {
	emit := func(l *slog.Logger) {
		l.Debug("case", "name", "TCP_RR loopback", "samples", 3)
		l.Info("using the local platform")
		l.Warn("prometheus: no data")
		l.Error("index into OpenSearch failed")
		l.Log(t.Context(), Always, "cnperf: clean-up did not finish; x")
	}
	for _, tc := range []struct {
		name  string
		level slog.Level
		want  string
	}{
		{"default", Default, "using the local platform\nwarning: prometheus: no data\nerror: index into OpenSearch failed\ncnperf: clean-up did not finish; x\n"},
		{"-q", Quiet, "error: index into OpenSearch failed\ncnperf: clean-up did not finish; x\n"},
		{"-v", Verbose, "debug: case name=\"TCP_RR loopback\" samples=3\nusing the local platform\nwarning: prometheus: no data\nerror: index into OpenSearch failed\ncnperf: clean-up did not finish; x\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			lv := new(slog.LevelVar)
			lv.Set(tc.level)
			emit(New(&b, lv))
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}

func TestWithAttrsAndGroups(t *testing.T) {
	var b bytes.Buffer
	New(&b, Verbose).With("run", "3f0c").WithGroup("kube").Debug("pod ready", "name", "server-0")
	if want := "debug: pod ready run=3f0c kube.name=server-0\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := Writer(New(&b, Default), slog.LevelInfo)
	fmt.Fprint(w, "started native server (pid 1)\nwarning: a")
	if b.String() != "started native server (pid 1)\n" {
		t.Errorf("a partial line was written: %q", b.String())
	}
	fmt.Fprint(w, "ddress\n")
	if want := "started native server (pid 1)\nwarning: address\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	fmt.Fprint(Writer(New(&b, Quiet), slog.LevelInfo), "progress\nwarning: w\nerror: tiger-bench test 2 failed\n")
	if want := "error: tiger-bench test 2 failed\n"; b.String() != want {
		t.Errorf("-q printed %q", b.String())
	}
	fmt.Fprintln(Writer(nil, slog.LevelInfo), "nowhere") // a nil logger writes nothing
}
