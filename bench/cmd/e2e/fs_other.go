//go:build !linux

package main

// fsName names the file system dir is on: unknown outside Linux.
func fsName(dir string) string { return "unknown" }

// freeBytes returns the room left on dir's file system: unknown (0)
// outside Linux, so the outputs stay in -dir.
func freeBytes(dir string) int64 { return 0 }
