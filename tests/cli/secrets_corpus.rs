//! Accuracy of secret detection on a generated corpus (being written).
