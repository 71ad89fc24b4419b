// Package devices drives the consoles of GNS3 nodes, telnet or SSH as the node's console_type
// says: a hand-rolled telnet client that copes with real console quirks, an SSH shell driven the
// same way (GNS3 3.1 serves the same serial console over SSH, with a new host key at every node
// start: the key is accepted at the address GNS3 gives and its fingerprint recorded), the
// command safety policy, the per-device lock that keeps one writer per console across worker
// processes, and per-platform profiles (prompts, pager, setup, configuration mode, errors,
// read-back). The profiles, by the name a "device_type:" tag gives:
//
//   - vpcs: Virtual PC Simulator
//   - cisco_ios: Cisco IOS, IOSv, IOS-XE, IOU and Dynamips
//   - arista_eos: Arista vEOS and cEOS
//   - ruijie: Ruijie RGOS
//   - huawei_vrp: Huawei VRP and CloudEngine
//   - juniper_junos: Juniper Junos (vMX, vSRX, vQFX, vJunos)
//   - frr: FRRouting's vtysh (GNS3's FRR appliance)
//   - vyos: VyOS
//   - mikrotik_routeros: MikroTik RouterOS (CHR)
//   - openwrt: OpenWrt's BusyBox shell with uci
//   - linux: a Linux or BusyBox shell (Docker nodes, Linux VMs), with exit statuses read and
//     addresses and routes as its configuration
//
// The session's code is split by concern: session.go opens a console and brings it to a
// prompt, transport.go reaches it (telnet or SSH), wake.go wakes it (logins, "Press RETURN"),
// command.go runs one command and judges its outcome, exchange.go reads the console's answer to
// one line, prompt.go and conn.go wait for prompts and move bytes, telnet.go speaks telnet,
// interrupt.go stops what never ends, shell.go knows Linux shells.
package devices
