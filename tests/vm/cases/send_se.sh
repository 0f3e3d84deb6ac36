# SPDX-License-Identifier: GPL-2.0
# budget: 50
# send_se: verified send-se transfers between the VMs: 0, 1, 4095, 4096, 65536 bytes
# and 1 MiB, 1 to 16 scatter/gather elements, each size with CRC off, CRC on
# or markers in turn (iwarp_matrix lean: send's case runs the full matrix of
# the SEND framing; check-long runs the full one here too, 16 MiB included).
# Then CQ notification (srnic-vmtest solicited, receiver on b): a receive CQ
# armed solicited-only fires no event for a plain SEND within 2 s (its
# completion is polled), fires for a SEND with Solicited Event; the arming is
# one-shot (no event for the next SE SEND without re-arming); REQ_NOTIFY
# answers 1 while a completion is queued; NEXT_COMP fires on a plain SEND; a
# solicited-only arming fires on the error completions of the receives flushed
# at disconnect.
. /srnic/lib.sh
iwarp_matrix send-se lean
vmtest solicited
expect_idle
pass
