const { loadFixture, time } = require("@nomicfoundation/hardhat-toolbox/network-helpers");
const { anyValue } = require("@nomicfoundation/hardhat-chai-matchers/withArgs");
const { expect } = require("chai");
const { ethers } = require("hardhat");

describe("Lock", function () {
  const ONE_YEAR = 365 * 24 * 60 * 60;
  const LOCKED = 1_000_000_000n;

  async function deployLock() {
    const unlockTime = (await time.latest()) + ONE_YEAR;
    const [owner, other] = await ethers.getSigners();
    const lock = await ethers.deployContract("Lock", [unlockTime], { value: LOCKED });
    return { lock, unlockTime, owner, other };
  }

  it("holds what was sent", async function () {
    const { lock, owner } = await loadFixture(deployLock);
    expect(await ethers.provider.getBalance(lock.target)).to.equal(LOCKED);
    expect(await lock.owner()).to.equal(owner.address);
  });

  it("refuses a deployment unlocking in the past", async function () {
    const latest = await time.latest();
    const Lock = await ethers.getContractFactory("Lock");
    await expect(Lock.deploy(latest, { value: 1 })).to.be.revertedWith("Unlock time must be in the future");
  });

  it("refuses to pay out early", async function () {
    const { lock } = await loadFixture(deployLock);
    await expect(lock.withdraw()).to.be.revertedWith("Too early");
  });

  it("refuses anyone but the owner once unlocked", async function () {
    const { lock, other } = await loadFixture(deployLock);
    await time.increase(ONE_YEAR);
    await expect(lock.connect(other).withdraw()).to.be.revertedWith("Not the owner");
  });

  it("emits Withdrawal", async function () {
    const { lock } = await loadFixture(deployLock);
    await time.increase(ONE_YEAR);
    await expect(lock.withdraw()).to.emit(lock, "Withdrawal").withArgs(LOCKED, anyValue);
  });

  it("pays the owner, gas aside", async function () {
    const { lock, owner } = await loadFixture(deployLock);
    await time.increase(ONE_YEAR);
    await expect(lock.withdraw()).to.changeEtherBalance(owner, LOCKED);
  });

  it("moves the coin from the lock to the owner", async function () {
    const { lock, owner } = await loadFixture(deployLock);
    await time.increase(ONE_YEAR);
    await expect(lock.withdraw()).to.changeEtherBalances([owner, lock], [LOCKED, -LOCKED]);
  });

  it("is locked again after the fixture is loaded", async function () {
    const { lock, unlockTime } = await loadFixture(deployLock);
    expect(await time.latest()).to.be.lessThan(unlockTime);
    await expect(lock.withdraw()).to.be.revertedWith("Too early");
  });
});
