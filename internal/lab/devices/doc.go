// Package devices drives the telnet consoles of GNS3 nodes: a hand-rolled
// telnet client that copes with real console quirks, per-platform profiles
// (VPCS, Cisco IOS, Huawei VRP, Ruijie, Arista EOS, Junos, Linux shells),
// the command safety policy and the per-device lock that keeps one writer
// per console across worker processes.
package devices
