//! Each standard function's last node, fed in the message's order: KT's
//! first chunk and the other chunks' chaining values, or ParallelHash's
//! block hashes, or all of TurboSHAKE's message.

use super::encode::{bytepad, encode_string, left_encode, length_encode, right_encode};
use super::sponge::ByteSponge;
use super::{Family, StandardParams};

/// KT: D of the single node (|S| ≤ 8192) and of the final node (RFC 9861
/// §3.2); the chunks' own is in their sponge spec (`SpongeSpec::KT128`).
const KT_SINGLE_NODE_DOMAIN: u8 = 0x07;
const KT_FINAL_NODE_DOMAIN: u8 = 0x06;
/// What follows S_0 in KT's final node, and the final node's last bytes.
const KT_SEPARATOR: [u8; 8] = [0x03, 0, 0, 0, 0, 0, 0, 0];
const KT_END: [u8; 2] = [0xff, 0xff];
/// ParallelHash: the last node is cSHAKE (domain `04`) with N =
/// "ParallelHash" (SP 800-185 §3.3, §6.3); the blocks' sponge (SHAKE) is
/// in their sponge spec (`SpongeSpec::PARALLEL_HASH128`).
const CSHAKE_DOMAIN: u8 = 0x04;
const PARALLEL_HASH_NAME: &[u8] = b"ParallelHash";

/// The last node of one digest, as its parts arrive.
#[derive(Clone)]
pub(crate) struct LastNode {
    sponge: ByteSponge,
    family: Family,
    /// Chaining values absorbed.
    chaining_values: u64,
    /// KT: the first chunk S_0 is absorbed.
    first_chunk: bool,
}

impl LastNode {
    pub(crate) fn new(params: &StandardParams) -> LastNode {
        let standard = params.standard();
        let family = standard.family();
        let mut sponge = ByteSponge::new(standard.rate(), standard.rounds());
        if family == Family::ParallelHash {
            let mut names = encode_string(PARALLEL_HASH_NAME);
            names.extend(encode_string(params.customization()));
            sponge.absorb(&bytepad(&names, standard.rate()));
            sponge.absorb(&left_encode(params.block_size() as u64));
        }
        LastNode {
            sponge,
            family,
            chaining_values: 0,
            first_chunk: false,
        }
    }

    /// Whether KT's next chunk is its first, which the last node takes
    /// whole rather than its chaining value.
    pub(crate) fn wants_first_chunk(&self) -> bool {
        self.family == Family::Kangaroo && !self.first_chunk
    }

    /// KT's first chunk S_0, or TurboSHAKE's next bytes.
    pub(crate) fn absorb_message(&mut self, bytes: &[u8]) {
        self.first_chunk = true;
        self.sponge.absorb(bytes);
    }

    /// The chaining values of the next chunks, in order.
    pub(crate) fn absorb_chaining_values(&mut self, values: &[u8], count: u64) {
        if count == 0 {
            return;
        }
        if self.family == Family::Kangaroo && self.chaining_values == 0 {
            self.sponge.absorb(&KT_SEPARATOR);
        }
        self.sponge.absorb(values);
        self.chaining_values += count;
    }

    /// The digest.
    pub(crate) fn finish(mut self, params: &StandardParams) -> Vec<u8> {
        let mut out = vec![0u8; params.output_len()];
        let domain = match self.family {
            Family::TurboShake => params.domain(),
            Family::Kangaroo if self.chaining_values == 0 => KT_SINGLE_NODE_DOMAIN,
            Family::Kangaroo => {
                self.sponge.absorb(&length_encode(self.chaining_values));
                self.sponge.absorb(&KT_END);
                KT_FINAL_NODE_DOMAIN
            }
            Family::ParallelHash => {
                self.sponge.absorb(&right_encode(self.chaining_values));
                self.sponge
                    .absorb(&right_encode(8 * params.output_len() as u64));
                CSHAKE_DOMAIN
            }
        };
        self.sponge.finish(domain, &mut out);
        out
    }
}
