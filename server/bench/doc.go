// Package bench measures Deskhand (make bench): its real server stack
// beside a bare mcp-go server under the same load, the store at a million
// messages, and the shipped binary as a process. The code is all test
// code; this file only names the package.
package bench
