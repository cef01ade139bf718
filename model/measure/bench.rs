//! The hot path on real threads (being ported to the new API).
