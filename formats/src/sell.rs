//! sell format (being written).
