//! Rows held column by column until a sink writes them: each column keeps the rows it has a
//! value in and those values (most columns of `calls` are null in most rows), so a row costs
//! what it holds, not the table's width.

use crate::columns::{text_into, ColType, Column};
use crate::row::Cell;

/// One column's values.
#[derive(Default)]
pub struct ColBuf {
    /// Rows (of the buffer) that have a value, ascending.
    pub rows: Vec<u32>,
    /// Values of an int64 or int32 column, one per entry of `rows`.
    pub ints: Vec<i64>,
    /// Values of a bool column, one per entry of `rows`.
    pub bools: Vec<bool>,
    /// Text and binary values (and list items) end to end; `ends[i]` is where item `i` ends.
    pub bytes: Vec<u8>,
    /// End offsets into `bytes`, one per text or binary value (per list item for lists).
    pub ends: Vec<u32>,
    /// A text column's values that live as long as the program ([`Cell::Static`]), by item;
    /// empty until the column holds one, then one entry per item (`None`: in `bytes`).
    pub statics: Vec<Option<&'static str>>,
    /// Values of a digest column (32-byte BLAKE3 hashes), one per entry of `rows`.
    pub digests: Vec<[u8; 32]>,
    /// Lists: where each row's items end in `ends`.
    pub list_ends: Vec<u32>,
}

impl ColBuf {
    fn clear(&mut self) {
        self.rows.clear();
        self.ints.clear();
        self.bools.clear();
        self.bytes.clear();
        self.ends.clear();
        self.statics.clear();
        self.digests.clear();
        self.list_ends.clear();
    }

    /// Item `i` of a text or binary column.
    pub fn item(&self, i: usize) -> &[u8] {
        if let Some(Some(s)) = self.statics.get(i) {
            return s.as_bytes();
        }
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }
}

/// Rows of one table, column by column.
pub struct RowBuffer {
    /// The type of each column, in the table's column order ([`Column::ty`]).
    pub types: Vec<ColType>,
    /// One buffer per column, aligned with `types`.
    pub cols: Vec<ColBuf>,
    /// Rows pushed since the last [`RowBuffer::clear`].
    pub rows: u32,
    /// Bytes held (values, approximately).
    pub bytes: usize,
    /// Text values that were not UTF-8 and were escaped ([`text_into`]).
    pub escaped: u64,
    /// Per row: a sort key (call, time), when the table is sorted.
    pub keys: Vec<(u32, i64)>,
}

impl RowBuffer {
    /// An empty buffer for a table of these columns.
    pub fn new(columns: &[Column]) -> RowBuffer {
        RowBuffer {
            types: columns.iter().map(|c| c.ty).collect(),
            cols: columns.iter().map(|_| ColBuf::default()).collect(),
            rows: 0,
            bytes: 0,
            escaped: 0,
            keys: Vec::new(),
        }
    }

    /// Forget the rows held (after a row group is written), keeping the allocations; the
    /// `escaped` count goes on.
    pub fn clear(&mut self) {
        for c in &mut self.cols {
            c.clear();
        }
        self.rows = 0;
        self.bytes = 0;
        self.keys.clear();
    }

    /// Append a row: `cells` sorted by column, at most one per column. A cell whose type does
    /// not fit its column is left out (the builder never makes one).
    pub fn push(&mut self, cells: &[(u16, Cell<'_>)]) {
        let r = self.rows;
        for (i, v) in cells {
            let i = *i as usize;
            let Some(ty) = self.types.get(i).copied() else { continue };
            let c = &mut self.cols[i];
            match (ty, v) {
                (ColType::Int64 | ColType::Int32, Cell::Int(x)) => c.ints.push(*x),
                (ColType::Bool, Cell::Bool(b)) => c.bools.push(*b),
                (ColType::Text, Cell::Text(b) | Cell::Bytes(b)) => {
                    if text_into(b, &mut c.bytes) {
                        self.escaped += 1;
                    }
                    if !c.statics.is_empty() {
                        c.statics.push(None);
                    }
                    c.ends.push(c.bytes.len() as u32);
                    self.bytes += b.len();
                }
                (ColType::Text, Cell::Static(s)) => {
                    if c.statics.len() < c.ends.len() {
                        c.statics.resize(c.ends.len(), None);
                    }
                    c.statics.push(Some(s));
                    c.ends.push(c.bytes.len() as u32);
                    self.bytes += 16;
                }
                (ColType::Bytes, Cell::Bytes(b) | Cell::Text(b)) => {
                    c.bytes.extend_from_slice(b);
                    c.ends.push(c.bytes.len() as u32);
                    self.bytes += b.len();
                }
                (ColType::Digest, Cell::Digest(d)) => c.digests.push(*d),
                (ColType::TextList, Cell::List(items)) => {
                    for it in *items {
                        if text_into(it, &mut c.bytes) {
                            self.escaped += 1;
                        }
                        c.ends.push(c.bytes.len() as u32);
                        self.bytes += it.len() + 4;
                    }
                    c.list_ends.push(c.ends.len() as u32);
                }
                _ => continue,
            }
            c.rows.push(r);
            self.bytes += 12;
        }
        self.rows += 1;
    }
}
