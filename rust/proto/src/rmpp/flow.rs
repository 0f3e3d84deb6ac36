// SPDX-License-Identifier: GPL-2.0
//! Receiver flow control: the CTS grant rule of the Sandia RMPP paper, Figure 8.

/// Number of data packets to grant in one CTS (paper, Figure 8):
///
/// ```text
/// n = MAX_RCV_BUF - NODES - outstanding;
/// if (n > MAX_DATA_PKTS) n = MAX_DATA_PKTS; else if (n < 1) n = 1;
/// ```
///
/// `outstanding` is the number of data packets this node has granted to all incoming
/// messages together that have not arrived yet; `NODES` receive buffers are reserved
/// for first packets (RTS) of new messages. The subtraction is done without wrapping:
/// a result below one grants one packet, so every message always makes progress. A
/// `max_data_pkts` of zero is treated as one. The caller adds the result to
/// `outstanding`.
pub fn cts_grant(max_rcv_buf: u32, nodes: u32, outstanding: u32, max_data_pkts: u32) -> u32 {
    max_rcv_buf
        .saturating_sub(nodes)
        .saturating_sub(outstanding)
        .min(max_data_pkts)
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::cts_grant;

    #[test]
    fn grant_table() {
        // (MAX_RCV_BUF, NODES, outstanding, MAX_DATA_PKTS) -> n
        let table: &[(u32, u32, u32, u32, u32)] = &[
            (2048, 2048, 0, 16, 1), // the paper's own constants: always one
            (4096, 2048, 0, 16, 16),
            (4096, 2048, 2032, 16, 16),
            (4096, 2048, 2033, 16, 15),
            (4096, 2048, 2047, 16, 1),
            (4096, 2048, 2048, 16, 1),
            (4096, 2048, 9000, 16, 1),
            (100, 10, 80, 16, 10),
            (100, 200, 0, 16, 1),
            (u32::MAX, 0, 0, 16, 16),
            (64, 0, 0, 0, 1),
        ];
        for &(buf, nodes, out, max, want) in table {
            assert_eq!(
                cts_grant(buf, nodes, out, max),
                want,
                "{buf} {nodes} {out} {max}"
            );
        }
    }
}
