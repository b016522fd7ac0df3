//! Plane geometry in bond lengths: points, and the few operations the layout needs.

use std::ops::{Add, Mul, Sub};

/// A point (or a vector) in the drawing plane; one bond is 1.0 long, y grows downwards as
/// in SVG.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

impl Point {
    pub const fn new(x: f64, y: f64) -> Self {
        Self { x, y }
    }

    /// The unit vector at `angle` radians.
    pub fn polar(angle: f64) -> Self {
        Self::new(angle.cos(), angle.sin())
    }

    pub fn length(self) -> f64 {
        self.x.hypot(self.y)
    }

    pub fn distance(self, other: Self) -> f64 {
        (self - other).length()
    }

    pub fn angle(self) -> f64 {
        self.y.atan2(self.x)
    }

    /// This vector scaled to length 1 (or `fallback` if it has no length).
    pub fn unit_or(self, fallback: Self) -> Self {
        let l = self.length();
        if l < 1e-9 { fallback } else { self * (1.0 / l) }
    }

    /// Rotated by `angle` radians about the origin.
    pub fn rotated(self, angle: f64) -> Self {
        let (s, c) = angle.sin_cos();
        Self::new(self.x * c - self.y * s, self.x * s + self.y * c)
    }

    /// Perpendicular (rotated a quarter turn).
    pub fn normal(self) -> Self {
        Self::new(-self.y, self.x)
    }

    pub fn dot(self, other: Self) -> f64 {
        self.x * other.x + self.y * other.y
    }

    /// The z of the cross product: which side of `self` the vector `other` lies on.
    pub fn cross(self, other: Self) -> f64 {
        self.x * other.y - self.y * other.x
    }

    /// Mirrored across the line through `a` and `b`.
    pub fn reflected(self, a: Self, b: Self) -> Self {
        let d = (b - a).unit_or(Self::new(1.0, 0.0));
        let v = self - a;
        let along = d * v.dot(d);
        a + along * 2.0 - v
    }
}

impl Add for Point {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        Self::new(self.x + o.x, self.y + o.y)
    }
}

impl Sub for Point {
    type Output = Self;
    fn sub(self, o: Self) -> Self {
        Self::new(self.x - o.x, self.y - o.y)
    }
}

impl Mul<f64> for Point {
    type Output = Self;
    fn mul(self, k: f64) -> Self {
        Self::new(self.x * k, self.y * k)
    }
}

/// The mean of `points` (the origin for none).
pub fn centroid(points: impl IntoIterator<Item = Point>) -> Point {
    let (mut sum, mut n) = (Point::default(), 0.0);
    for p in points {
        sum = sum + p;
        n += 1.0;
    }
    if n == 0.0 { sum } else { sum * (1.0 / n) }
}

/// Whether segments `a`-`b` and `c`-`d` cross in their interiors (segments that share an
/// end, or only touch, do not).
pub fn segments_cross(a: Point, b: Point, c: Point, d: Point) -> bool {
    let side = |p: Point, q: Point, r: Point| (q - p).cross(r - p);
    let (d1, d2) = (side(c, d, a), side(c, d, b));
    let (d3, d4) = (side(a, b, c), side(a, b, d));
    const EPS: f64 = 1e-6;
    ((d1 > EPS && d2 < -EPS) || (d1 < -EPS && d2 > EPS))
        && ((d3 > EPS && d4 < -EPS) || (d3 < -EPS && d4 > EPS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reflection_and_crossing() {
        let p = Point::new(1.0, 1.0).reflected(Point::new(0.0, 0.0), Point::new(1.0, 0.0));
        assert!((p.x - 1.0).abs() < 1e-12 && (p.y + 1.0).abs() < 1e-12);
        let o = Point::default();
        assert!(segments_cross(
            o,
            Point::new(1.0, 1.0),
            Point::new(0.0, 1.0),
            Point::new(1.0, 0.0)
        ));
        assert!(!segments_cross(
            o,
            Point::new(1.0, 0.0),
            Point::new(1.0, 0.0),
            Point::new(2.0, 1.0)
        ));
    }
}
