package models

// SeqWaitCheck is the slot of a device's record of wait_for check i: the command, its last
// output, and where the check stood (status ok once it held). Below the reads' slots, so the
// records sort after the call's commands and are never taken for one of them.
func SeqWaitCheck(i int) int { return -100 - i }

// WaitCheckIndex is the check a wait_for record belongs to, and false for any other record.
func WaitCheckIndex(seq int) (int, bool) {
	if seq > -100 {
		return 0, false
	}
	return -100 - seq, true
}
