import SwiftPushStatus
import Testing

@Suite("ProgressFigures", .timeLimit(.minutes(1)))
struct ProgressFiguresTests {
    @Test("Time left is remaining over rate; 0 when nothing remains; unknown when nothing moves")
    func eta() {
        #expect(ProgressFigures(unit: .notifications, done: 400, remaining: 600, rate: 200).etaSeconds == 3)
        #expect(ProgressFigures(unit: .notifications, done: 400, remaining: 0, rate: 0).etaSeconds == 0)
        #expect(ProgressFigures(unit: .notifications, done: 400, remaining: 600, rate: 0).etaSeconds == nil)
        #expect(ProgressFigures(unit: .notifications, done: 400, remaining: 600, rate: nil).etaSeconds == nil)
        #expect(ProgressFigures(unit: .notifications, done: 400, remaining: nil, rate: 10).etaSeconds == nil)
    }

    @Test("The fraction is done over done + remaining, unknown when either is or nothing was there")
    func fraction() {
        let p = ProgressFigures(unit: .entries, done: 250, remaining: 750, rate: nil)
        #expect(p.total == 1000 && p.fraction == 0.25)
        #expect(ProgressFigures(unit: .entries, done: 0, remaining: 0, rate: nil).fraction == nil)
        #expect(ProgressFigures(unit: .entries, done: nil, remaining: 5, rate: nil).total == nil)
    }

    @Test("Shards add up when they count the same unit; a figure unknown in one is unknown in the sum")
    func sums() {
        let a = ProgressFigures(unit: .notifications, done: 10, remaining: 90, rate: 5)
        let b = ProgressFigures(unit: .notifications, done: 20, remaining: nil, rate: 7)
        let s = ProgressFigures.sum([a, b])
        #expect(s.unit == .notifications && s.done == 30 && s.remaining == nil && s.rate == 12)
        let mixed = ProgressFigures.sum([a, ProgressFigures(unit: .entries, done: 1, remaining: 1, rate: 1)])
        #expect(mixed.unit == .mixed && mixed.done == nil && mixed.rate == nil)
        #expect(ProgressFigures.sum([a, ProgressFigures(unit: .notifications, done: 1, remaining: 1, rate: nil)]).rate == nil)
        #expect(ProgressFigures.sum([]).done == 0)
    }
}
