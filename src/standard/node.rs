//! Each standard function's last node, fed in the message's order: KT's
//! first chunk and the other chunks' chaining values, or ParallelHash's
//! block hashes, or all of TurboSHAKE's message. The bytes that frame it
//! are each document's (`rfc9861`, `sp800_185`); this runs them through
//! one sponge.

use super::rfc9861::{self, FINAL_NODE_DOMAIN, SEPARATOR, SINGLE_NODE_DOMAIN};
use super::sp800_185::{self, CSHAKE_DOMAIN};
use super::sponge::ByteSponge;
use super::{Family, StandardParams};

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
            let start = sp800_185::parallel_hash_start(
                params.customization(),
                params.block_size(),
                standard.rate(),
            );
            sponge.absorb(&start);
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
            self.sponge.absorb(&SEPARATOR);
        }
        self.sponge.absorb(values);
        self.chaining_values += count;
    }

    /// The digest.
    pub(crate) fn finish(mut self, params: &StandardParams) -> Vec<u8> {
        let mut out = vec![0u8; params.output_len()];
        let domain = match self.family {
            Family::TurboShake => params.domain(),
            Family::Kangaroo if self.chaining_values == 0 => SINGLE_NODE_DOMAIN,
            Family::Kangaroo => {
                let end = rfc9861::final_node_end(self.chaining_values);
                self.sponge.absorb(&end);
                FINAL_NODE_DOMAIN
            }
            Family::ParallelHash => {
                let end = sp800_185::parallel_hash_end(self.chaining_values, params.output_len());
                self.sponge.absorb(&end);
                CSHAKE_DOMAIN
            }
        };
        self.sponge.finish(domain, &mut out);
        out
    }
}
