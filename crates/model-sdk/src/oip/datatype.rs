//! The protocol's element types: their names on the wire and their widths in binary.

/// The protocol's element types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Datatype {
    Bool,
    Uint8,
    Uint16,
    Uint32,
    Uint64,
    Int8,
    Int16,
    Int32,
    Int64,
    Fp16,
    Fp32,
    Fp64,
    Bytes,
}

/// Every datatype, in the protocol's order.
pub(crate) const ALL: [Datatype; 13] = [
    Datatype::Bool,
    Datatype::Uint8,
    Datatype::Uint16,
    Datatype::Uint32,
    Datatype::Uint64,
    Datatype::Int8,
    Datatype::Int16,
    Datatype::Int32,
    Datatype::Int64,
    Datatype::Fp16,
    Datatype::Fp32,
    Datatype::Fp64,
    Datatype::Bytes,
];

impl Datatype {
    /// The name on the wire (`FP32`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Bool => "BOOL",
            Self::Uint8 => "UINT8",
            Self::Uint16 => "UINT16",
            Self::Uint32 => "UINT32",
            Self::Uint64 => "UINT64",
            Self::Int8 => "INT8",
            Self::Int16 => "INT16",
            Self::Int32 => "INT32",
            Self::Int64 => "INT64",
            Self::Fp16 => "FP16",
            Self::Fp32 => "FP32",
            Self::Fp64 => "FP64",
            Self::Bytes => "BYTES",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        ALL.into_iter().find(|d| d.name() == name)
    }

    /// Bytes per element in binary form; `None` for BYTES, whose elements say their length.
    pub fn width(self) -> Option<usize> {
        Some(match self {
            Self::Bool | Self::Uint8 | Self::Int8 => 1,
            Self::Uint16 | Self::Int16 | Self::Fp16 => 2,
            Self::Uint32 | Self::Int32 | Self::Fp32 => 4,
            Self::Uint64 | Self::Int64 | Self::Fp64 => 8,
            Self::Bytes => return None,
        })
    }

    /// Whether the elements are numbers (every type but BOOL and BYTES).
    pub fn is_number(self) -> bool {
        !matches!(self, Self::Bool | Self::Bytes)
    }
}
