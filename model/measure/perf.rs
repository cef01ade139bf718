//! How fast the checkers reach verdicts (being ported to the new API).
